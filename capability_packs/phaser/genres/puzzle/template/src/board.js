// Pure grid rules of the match-3 board: the seeded PRNG, dealing a board, finding lines, gravity and refill.
// No Phaser, no DOM. A grid is row-major: grid[y][x] is a tile kind index (0 .. kinds-1).
// checks.py / rules.py port dealBoard() and the PRNG to Python exactly (a test compares both).

export const MAX_DEALS = 64; // boards dealt before planting a move (a dealt board without a move is rare)
const DIRS = [[1, 0], [0, 1]];

// mulberry32 over a uint32 state; returns [value in [0, 1), next state] so the state stays plain JSON.
export function rngNext(s) {
  const a = (s + 0x6D2B79F5) >>> 0;
  let t = Math.imul(a ^ (a >>> 15), a | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return [((t ^ (t >>> 14)) >>> 0) / 4294967296, a];
}

// An integer in [0, n) drawn from holder.rng (advanced in place).
export function randInt(holder, n) {
  const [v, next] = rngNext(holder.rng);
  holder.rng = next;
  return Math.floor(v * n);
}

const inside = (size, x, y) => x >= 0 && y >= 0 && x < size && y < size;
const at = (grid, x, y) => (inside(grid.length, x, y) ? grid[y][x] : null);

// Would kind k at (x, y) complete a line of three with tiles already placed (null = not placed yet)?
export function makesLine(grid, x, y, k) {
  for (const [dx, dy] of DIRS) {
    const pairs = [[-2, -1], [-1, 1], [1, 2]];
    for (const [a, b] of pairs) {
      if (at(grid, x + a * dx, y + a * dy) === k && at(grid, x + b * dx, y + b * dy) === k) return true;
    }
  }
  return false;
}

// Fill a size×size grid row by row; each free cell takes a random kind that makes no line with placed tiles.
// presets: {"x,y": kind} cells fixed before filling.
export function fillBoard(holder, size, kinds, presets = {}) {
  const grid = Array.from({ length: size }, () => Array(size).fill(null));
  for (const [key, k] of Object.entries(presets)) {
    const [x, y] = key.split(',').map(Number);
    grid[y][x] = k;
  }
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (presets[`${x},${y}`] !== undefined) continue;
      const allowed = [];
      for (let k = 0; k < kinds; k++) if (!makesLine(grid, x, y, k)) allowed.push(k);
      grid[y][x] = allowed.length ? allowed[randInt(holder, allowed.length)] : randInt(holder, kinds);
    }
  }
  return grid;
}

// Every maximal horizontal or vertical run of 3+ equal tiles: [{cells: [[x, y], ...]}].
export function findRuns(grid) {
  const size = grid.length;
  const runs = [];
  for (const [dx, dy] of DIRS) {
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const k = grid[y][x];
        if (k === null || at(grid, x - dx, y - dy) === k) continue; // not the start of a run
        const cells = [];
        for (let i = 0; at(grid, x + i * dx, y + i * dy) === k; i++) cells.push([x + i * dx, y + i * dy]);
        if (cells.length >= 3) runs.push({ kind: k, cells });
      }
    }
  }
  return runs;
}

export function swapCells(grid, a, b) {
  const t = grid[a.y][a.x];
  grid[a.y][a.x] = grid[b.y][b.x];
  grid[b.y][b.x] = t;
}

// Does swapping the neighbours a and b make at least one line?
export function swapMatches(grid, a, b) {
  swapCells(grid, a, b);
  const hit = findRuns(grid).length > 0;
  swapCells(grid, a, b);
  return hit;
}

// Every swap of two neighbours that makes a line: [{a: {x, y}, b: {x, y}}], row-major, right before down.
export function validSwaps(grid) {
  const size = grid.length;
  const out = [];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      for (const [dx, dy] of DIRS) {
        const a = { x, y };
        const b = { x: x + dx, y: y + dy };
        if (inside(size, b.x, b.y) && swapMatches(grid, a, b)) out.push({ a, b });
      }
    }
  }
  return out;
}

export const hasMove = (grid) => validSwaps(grid).length > 0;

// A board with no line and at least one matching swap: up to MAX_DEALS random deals, then a deal with a
// planted move (kinds 0,0,_ on the top row and 0 below the gap: swapping the gap down makes a line).
export function dealBoard(holder, size, kinds) {
  for (let i = 0; i < MAX_DEALS; i++) {
    const grid = fillBoard(holder, size, kinds);
    if (hasMove(grid)) return grid;
  }
  return fillBoard(holder, size, kinds, { '0,0': 0, '1,0': 0, '2,1': 0 });
}

// Clear the cells, let tiles fall and refill the gaps from the top with random kinds.
// Returns, per column, how many new tiles fell in (for the drop animation).
export function collapse(holder, grid, cells, kinds) {
  const size = grid.length;
  for (const [x, y] of cells) grid[y][x] = null;
  const fallen = Array(size).fill(0);
  for (let x = 0; x < size; x++) {
    const column = [];
    for (let y = size - 1; y >= 0; y--) if (grid[y][x] !== null) column.push(grid[y][x]);
    fallen[x] = size - column.length;
    for (let y = size - 1, i = 0; y >= 0; y--, i++) grid[y][x] = i < column.length ? column[i] : null;
  }
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) if (grid[y][x] === null) grid[y][x] = randInt(holder, kinds);
  }
  return fallen;
}
