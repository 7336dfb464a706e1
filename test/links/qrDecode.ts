import { Resvg } from '@resvg/resvg-js';
import jsQR from 'jsqr';

/** Rasterises an SVG with resvg and reads the QR code in it with jsQR; null when none is found. */
export function decodeQrSvg(svg: string): { text: string; width: number; height: number } | null {
  const rendered = new Resvg(svg, { background: '#ffffff' }).render();
  const { width, height } = rendered;
  const rgba = new Uint8ClampedArray(rendered.pixels);
  const code = jsQR(rgba, width, height);
  return code ? { text: code.data, width, height } : null;
}
