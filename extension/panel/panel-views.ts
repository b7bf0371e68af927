// The editor-area panel (Open Panel) and the sidebar view, both showing the same UI through the
// shared PanelHub. retainContextWhenHidden stays off: the UI keeps its state with
// getState/setState and the hub replays data when a view comes back.
import * as vscode from 'vscode';
import type { ToWebview } from '../../contract/panel.js';
import { makeNonce, panelHtml } from './html.js';
import type { PanelHub } from './hub.js';

export const PANEL_VIEW_TYPE = 'strata.panel';
export const SIDEBAR_VIEW_ID = 'strata.panelView';

function setUp(webview: vscode.Webview, extensionUri: vscode.Uri, hub: PanelHub, visible: boolean, disposables: vscode.Disposable[]): { setVisible(v: boolean): void; dispose(): void } {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const media = vscode.Uri.joinPath(extensionUri, 'media');
  webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
  webview.html = panelHtml({
    cspSource: webview.cspSource,
    nonce: makeNonce(),
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
    styleUris: [
      webview.asWebviewUri(vscode.Uri.joinPath(dist, 'codicons', 'codicon.css')).toString(),
      webview.asWebviewUri(vscode.Uri.joinPath(media, 'panel.css')).toString(),
    ],
    title: 'Strata',
  });
  const handle = hub.attach({ post: (m: ToWebview) => void webview.postMessage(m) }, visible);
  disposables.push(webview.onDidReceiveMessage((m: unknown) => void handle.receive(m)));
  return handle;
}

export class PanelViews implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly extensionUri: vscode.Uri, private readonly hub: PanelHub) {}

  register(): vscode.Disposable[] {
    return [
      vscode.window.registerWebviewViewProvider(SIDEBAR_VIEW_ID, { resolveWebviewView: (view) => this.resolveView(view) }),
      vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => { this.adopt(panel); },
      }),
      this,
    ];
  }

  /** Opens (or reveals) the editor-area panel. */
  open(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(PANEL_VIEW_TYPE, 'Strata', vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: false });
    this.adopt(panel);
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'icon.png');
    const own: vscode.Disposable[] = [];
    const handle = setUp(panel.webview, this.extensionUri, this.hub, panel.visible, own);
    own.push(panel.onDidChangeViewState((e) => handle.setVisible(e.webviewPanel.visible)));
    panel.onDidDispose(() => {
      handle.dispose();
      for (const d of own) d.dispose();
      if (this.panel === panel) this.panel = undefined;
    });
  }

  private resolveView(view: vscode.WebviewView): void {
    const own: vscode.Disposable[] = [];
    const handle = setUp(view.webview, this.extensionUri, this.hub, view.visible, own);
    own.push(view.onDidChangeVisibility(() => handle.setVisible(view.visible)));
    view.onDidDispose(() => {
      handle.dispose();
      for (const d of own) d.dispose();
    });
  }
}
