import { describe, expect, it } from 'vitest';
import { parseRoofline, rooflineHtml } from '../../src/rooflineModel';

describe('roofline view page', () => {
  it('shows the server chart and why launches were not placed', () => {
    const answer = parseRoofline({ svg: '<svg xmlns="http://www.w3.org/2000/svg"><circle/></svg>', why: 'no launch placed: k: not timed' });
    const html = rooflineHtml(answer, 'k.py');
    expect(html).toContain('<div class="chart"><svg');
    expect(html).toContain('<p class="why">no launch placed: k: not timed</p>');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<script/);
  });
  it('says why there is no chart, escaping the server text', () => {
    const html = rooflineHtml(parseRoofline({ svg: null, why: 'not profiled yet: <run Profile>' }), 'a&b.py');
    expect(html).toContain('No roofline for a&amp;b.py.');
    expect(html).toContain('not profiled yet: &lt;run Profile&gt;');
    expect(parseRoofline({ svg: '<script>alert(1)</script>' }).svg).toBeUndefined();
  });
});
