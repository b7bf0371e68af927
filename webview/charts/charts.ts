// Chart.js in the panel: only the pieces used (bar and line charts, linear and category axes,
// tooltips, legend), drawn on canvas, so nothing breaks the strict CSP (no inline styles: sizes are
// set through the CSSOM). Colours come from the VS Code theme's variables; charts are redrawn when
// the theme changes (main.ts). Every chart fills its container's width.
import {
  BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { h } from '../dom.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, LineController, LineElement, PointElement, Tooltip, Legend);

export interface Theme {
  fg: string;
  muted: string;
  grid: string;
  font: string;
  blue: string; green: string; orange: string; red: string; purple: string; yellow: string;
}

export function theme(): Theme {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string): string => css.getPropertyValue(name).trim() || fallback;
  return {
    fg: v('--vscode-foreground', '#ccc'),
    muted: v('--vscode-descriptionForeground', '#999'),
    grid: v('--vscode-widget-border', v('--vscode-panel-border', 'rgba(128,128,128,0.25)')),
    font: v('--vscode-font-family', 'sans-serif'),
    blue: v('--vscode-charts-blue', '#3794ff'), green: v('--vscode-charts-green', '#89d185'),
    orange: v('--vscode-charts-orange', '#d18616'), red: v('--vscode-charts-red', '#f14c4c'),
    purple: v('--vscode-charts-purple', '#b180d7'), yellow: v('--vscode-charts-yellow', '#cca700'),
  };
}

const live = new Set<Chart>();

/** Destroys the charts drawn inside `el` (before it is redrawn), or all of them. */
export function destroyCharts(el?: Element): void {
  for (const c of [...live]) {
    if (!el || el.contains(c.canvas)) {
      c.destroy();
      live.delete(c);
    }
  }
}

/** Axis and legend styling from the theme, for a chart's options. */
export function axisStyle(t: Theme): { ticks: { color: string; font: { family: string; size: number } }; grid: { color: string }; title: { color: string; font: { family: string } } } {
  return { ticks: { color: t.fg, font: { family: t.font, size: 11 } }, grid: { color: t.grid }, title: { color: t.muted, font: { family: t.font } } };
}

/**
 * A chart in a box `height` px tall, as wide as its container. The canvas is an image with a text
 * label for screen readers (and tests); `summary` is the same information as text.
 */
export function chartBox(config: ChartConfiguration, height: number, label: string): HTMLElement {
  const canvas = h('canvas', { role: 'img', 'aria-label': label });
  const box = h('div', { class: 'chart-box' }, canvas);
  box.style.height = `${height}px`; // CSSOM: allowed by the CSP, unlike a style attribute
  // Drawn once the box is in the document (Chart.js measures its parent).
  queueMicrotask(() => {
    if (!box.isConnected) return;
    const t = theme();
    Chart.defaults.color = t.fg;
    Chart.defaults.font.family = t.font;
    Chart.defaults.borderColor = t.grid;
    const chart = new Chart(canvas, {
      ...config,
      options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options },
    } as ChartConfiguration);
    live.add(chart);
  });
  return box;
}
