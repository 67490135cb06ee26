// Pure platformer physics: one fixed step of the player's box. No Phaser, no DOM, no randomness.
// Mirrored line by line in ../../sim.py (the checks and the validator's probe use the same numbers):
// change one, change both (tests/unit/packs/test_genre_platformer.py compares their flights number for number).

// The player's box at a level's start: standing on the ground at (start.x, start.y).
export function bodyAtStart(level, phys) {
  return {
    x: level.start.x, y: level.start.y - phys.player.h, vx: 0, vy: 0, on_ground: true,
    coyote_ms: phys.coyote_ms, buffer_ms: 0, jump_held: false, air_jumps: phys.air_jumps,
  };
}

// One step of 1 / steps_per_second s: run (full air control), jump on a fresh press while grounded (or within
// coyote_ms of leaving the ground, or jump_buffer_ms before landing) or in the air (air_jumps per flight), gravity capped at max_fall_speed, then a
// swept move along x and one along y against the solid platforms. Returns true when the player jumped.
export function stepBody(b, input, solids, width, phys) {
  const dt = 1 / phys.steps_per_second;
  const ms = 1000 / phys.steps_per_second;
  const { w, h } = phys.player;
  const d = (input.right ? 1 : 0) - (input.left ? 1 : 0);
  b.vx = d * phys.run_speed;
  const pressed = !!input.jump && !b.jump_held;
  if (pressed) b.buffer_ms = phys.jump_buffer_ms;
  b.jump_held = !!input.jump;
  let jumped = false;
  if (b.buffer_ms > 0 && (b.on_ground || b.coyote_ms > 0)) {
    b.vy = -phys.jump_velocity;
    b.buffer_ms = 0;
    b.coyote_ms = 0;
    b.on_ground = false;
    b.air_jumps = phys.air_jumps;
    jumped = true;
  } else if (pressed && b.air_jumps > 0) {
    b.vy = -phys.jump_velocity;
    b.buffer_ms = 0;
    b.air_jumps -= 1;
    jumped = true;
  } else {
    b.buffer_ms = Math.max(0, b.buffer_ms - ms);
  }
  b.vy = Math.min(b.vy + phys.gravity * dt, phys.max_fall_speed);
  let nx = Math.min(Math.max(b.x + b.vx * dt, 0), width - w);
  for (const s of solids) {
    if (b.y < s.y + s.h && b.y + h > s.y) {
      if (b.vx > 0 && b.x + w <= s.x && nx + w > s.x) nx = Math.min(nx, s.x - w);
      else if (b.vx < 0 && b.x >= s.x + s.w && nx < s.x + s.w) nx = Math.max(nx, s.x + s.w);
    }
  }
  b.x = nx;
  let ny = b.y + b.vy * dt;
  let landed = false;
  let bumped = false;
  for (const s of solids) {
    if (b.x < s.x + s.w && b.x + w > s.x) {
      if (b.vy > 0 && b.y + h <= s.y && ny + h > s.y) {
        ny = Math.min(ny, s.y - h);
        landed = true;
      } else if (b.vy < 0 && b.y >= s.y + s.h && ny < s.y + s.h) {
        ny = Math.max(ny, s.y + s.h);
        bumped = true;
      }
    }
  }
  b.y = ny;
  if (landed) {
    b.vy = 0;
    b.on_ground = true;
    b.air_jumps = phys.air_jumps;
  } else {
    b.on_ground = false;
    if (bumped) b.vy = 0;
  }
  b.coyote_ms = b.on_ground ? phys.coyote_ms : Math.max(0, b.coyote_ms - ms);
  return jumped;
}

export const touches = (b, phys, r) =>
  b.x < r.x + r.w && b.x + phys.player.w > r.x && b.y < r.y + r.h && b.y + phys.player.h > r.y;

// 'pit' / 'hazard' (a life lost), 'exit' (level cleared) or null — in this order (sim.py outcome()).
export function bodyOutcome(b, level, phys) {
  if (b.y > level.height) return 'pit';
  if (level.hazards.some((z) => touches(b, phys, z))) return 'hazard';
  if (touches(b, phys, level.exit)) return 'exit';
  return null;
}

// A coin (a circle of radius r at x, y) is picked up when it touches the player's box.
export function touchesCoin(b, phys, c, r) {
  const px = Math.min(Math.max(c.x, b.x), b.x + phys.player.w);
  const py = Math.min(Math.max(c.y, b.y), b.y + phys.player.h);
  return (c.x - px) ** 2 + (c.y - py) ** 2 < r * r;
}
