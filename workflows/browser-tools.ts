// The browser tools the model may be offered: names and argument names as the Playwright MCP
// server has them (browser_navigate, browser_click {element, ref}, ...), so that prompts written
// for that server work here; the descriptions are ours. The calls run in activities/browser/.
// Pure data: bundled into the workflow sandbox.

/** One browser tool as the model is told of it (the shape of an OpenAI function tool). */
export interface BrowserToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** Longest wait of browser_wait_for's `time`, seconds. */
export const MAX_BROWSER_WAIT_SECONDS = 60;

const element = {
  type: 'string',
  description: 'What the element is, in words (e.g. "Send button"): shown to people reviewing the call.',
};
const ref = {
  type: 'string',
  description: 'The element\'s ref from the latest browser_snapshot (e.g. "e12"; "f1e3" inside a frame).',
};

const noArgs = { type: 'object', properties: {}, additionalProperties: false };

export const BROWSER_TOOLS: Readonly<Record<string, BrowserToolSpec>> = {
  browser_navigate: {
    name: 'browser_navigate',
    description:
      "Opens a URL (http or https) in the session's browser tab and answers the page's accessibility snapshot. Addresses of this service's own network are refused.",
    parameters: {
      type: 'object',
      properties: { url: { type: 'string', description: 'The absolute http(s) URL to open.' } },
      required: ['url'],
      additionalProperties: false,
    },
  },
  browser_navigate_back: {
    name: 'browser_navigate_back',
    description: "Goes back to the previous page of the tab's history and answers its snapshot.",
    parameters: noArgs,
  },
  browser_snapshot: {
    name: 'browser_snapshot',
    description:
      'Answers an accessibility snapshot of the current page: its structure and text as a YAML tree, each element you can act on marked [ref=...]. Take one before clicking or typing; refs of an older snapshot may no longer hold.',
    parameters: noArgs,
  },
  browser_click: {
    name: 'browser_click',
    description: "Clicks an element of the page, named by its ref, and answers the page's snapshot afterwards.",
    parameters: {
      type: 'object',
      properties: {
        element,
        ref,
        doubleClick: { type: 'boolean', description: 'Double-click instead of a single click (default false).' },
        button: { type: 'string', enum: ['left', 'right', 'middle'], description: 'The mouse button (default left).' },
      },
      required: ['element', 'ref'],
      additionalProperties: false,
    },
  },
  browser_type: {
    name: 'browser_type',
    description:
      "Types text into an editable element (replacing what it holds), optionally pressing Enter afterwards, and answers the page's snapshot.",
    parameters: {
      type: 'object',
      properties: {
        element,
        ref,
        text: { type: 'string', description: 'The text to type.' },
        submit: { type: 'boolean', description: 'Press Enter after typing (e.g. to submit a form).' },
        slowly: {
          type: 'boolean',
          description:
            'Type one key at a time, for pages that react to each key; by default the text is filled at once.',
        },
      },
      required: ['element', 'ref', 'text'],
      additionalProperties: false,
    },
  },
  browser_press_key: {
    name: 'browser_press_key',
    description: 'Presses a key on the keyboard in the page (the focused element gets it) and answers the snapshot.',
    parameters: {
      type: 'object',
      properties: {
        key: {
          type: 'string',
          description: 'A key name such as Enter, Tab, Escape, ArrowDown, PageDown, or a character such as a.',
        },
      },
      required: ['key'],
      additionalProperties: false,
    },
  },
  browser_select_option: {
    name: 'browser_select_option',
    description: 'Chooses one or more options of a drop-down (select) element and answers the snapshot.',
    parameters: {
      type: 'object',
      properties: {
        element,
        ref,
        values: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'The options to choose, by value or by visible label.',
        },
      },
      required: ['element', 'ref', 'values'],
      additionalProperties: false,
    },
  },
  browser_hover: {
    name: 'browser_hover',
    description: 'Moves the mouse over an element (to open a menu or a tooltip) and answers the snapshot.',
    parameters: {
      type: 'object',
      properties: { element, ref },
      required: ['element', 'ref'],
      additionalProperties: false,
    },
  },
  browser_wait_for: {
    name: 'browser_wait_for',
    description: `Waits for a text to appear, for a text to disappear, or for a number of seconds (at most ${MAX_BROWSER_WAIT_SECONDS}), then answers the snapshot. Give one of the three.`,
    parameters: {
      type: 'object',
      properties: {
        time: {
          type: 'number',
          minimum: 0,
          maximum: MAX_BROWSER_WAIT_SECONDS,
          description: 'Seconds to wait.',
        },
        text: { type: 'string', description: 'Wait until this text is visible on the page.' },
        textGone: { type: 'string', description: 'Wait until this text is no longer visible on the page.' },
      },
      additionalProperties: false,
    },
  },
  browser_take_screenshot: {
    name: 'browser_take_screenshot',
    description:
      'Saves a screenshot of the page (what the window shows, or the whole page) or of one element into the workspace, under /workspace/screenshots/, and answers its path. To act on the page use browser_snapshot, not a screenshot.',
    parameters: {
      type: 'object',
      properties: {
        filename: {
          type: 'string',
          description: 'The file name (saved in /workspace/screenshots/); by default page-<time>.png.',
        },
        type: { type: 'string', enum: ['png', 'jpeg'], description: 'The image format (default png).' },
        fullPage: { type: 'boolean', description: 'The whole scrollable page instead of the visible window.' },
        element: { ...element, description: 'With ref: what the element to capture is, in words.' },
        ref: { ...ref, description: 'With element: the ref of the element to capture alone.' },
      },
      additionalProperties: false,
    },
  },
  browser_close: {
    name: 'browser_close',
    description:
      "Closes the session's browser: its page, cookies and storage are gone. The next browser_navigate opens a fresh one.",
    parameters: noArgs,
  },
};
