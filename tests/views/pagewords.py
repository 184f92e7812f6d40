"""What the browser tests ask a page about its line breaks."""

# Every word of visible text, and where its letters lie: a word on more than one line is split.
SPLIT_WORDS = """() => {
  const seen = [], split = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode()); ) {
    const el = node.parentElement;
    if (el.closest("script, style, textarea, title") || !el.getClientRects().length) continue;
    for (const m of node.data.matchAll(/[\\p{L}\\p{N}_]+/gu)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      const tops = new Set(rects.map(r => Math.round(r.top)));
      seen.push(m[0]);
      if (tops.size > 1) split.push(m[0] + " in <" + el.tagName.toLowerCase() + ">");
    }
  }
  return {seen, split};
}"""
"""A function for ``page.evaluate``: ``{seen, split}``, every word (letters, digits, ``_``) of
the visible text, and those whose letters lie on more than one line."""
