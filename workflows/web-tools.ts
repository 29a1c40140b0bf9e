// The agent's web tools as the model sees them (docs/web.md): reading a page and searching the
// web. Both run as the runWebTool activity, through the outbound policy. Pure data: bundled into
// the workflow sandbox.

/** Characters of a page the model gets when the call gives no max_chars (the rest goes to a file of the workspace). */
export const WEB_FETCH_DEFAULT_CHARS = 40_000;

/** Most results one web_search call returns. */
export const WEB_SEARCH_MAX_RESULTS = 20;

/** What the model is told about each web tool: name, description, JSON Schema of the arguments. */
export const WEB_TOOL_SPECS = {
  web_fetch: {
    name: 'web_fetch',
    description: `Reads a web page (GET, http or https): HTML comes back as readable markdown of its main content (title and final URL first, links kept), a PDF as its text, JSON and plain text as they are; other files (images, archives) are saved to the workspace and the result says where. Long pages are cut at max_chars (default ${WEB_FETCH_DEFAULT_CHARS}); the whole text is then saved to a file of the workspace, named in the result. Private and internal addresses are refused.`,
    parameters: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The http(s) URL to read.' },
        format: {
          type: 'string',
          enum: ['markdown', 'text', 'raw'],
          description:
            'markdown (default): the main content as markdown; text: the same as plain text; raw: the page source as received.',
        },
        max_chars: {
          type: 'integer',
          minimum: 100,
          description: `Most characters to return (default ${WEB_FETCH_DEFAULT_CHARS}).`,
        },
      },
      required: ['url'],
      additionalProperties: false,
    },
  },
  web_search: {
    name: 'web_search',
    description: `Searches the web; returns up to count results (default 5, at most ${WEB_SEARCH_MAX_RESULTS}), each with its title, URL and a snippet. Read a result with web_fetch.`,
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to search for.' },
        count: {
          type: 'integer',
          minimum: 1,
          maximum: WEB_SEARCH_MAX_RESULTS,
          description: 'How many results (default 5).',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
} as const;
