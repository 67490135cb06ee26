// Shrink a text's font until it fits maxWidth (never below minPx): long titles and names from data stay inside.
export function fitWidth(text, maxWidth, minPx = 12) {
  let px = parseInt(text.style.fontSize, 10);
  while (text.width > maxWidth && px > minPx) {
    px -= 1;
    text.setFontSize(px);
  }
  return text;
}
