// Public surface of the scripted model server (see SCRIPTS.md for the directives).
export { startScriptedModel, DEFAULT_MODELS } from './server';
export type { ScriptedModel, ScriptedModelOptions, ScriptedModelStats, ReceivedRequest } from './server';
export { parseDirectives, DIRECTIVE_NAMES } from './directives';
export type { Directive, DirectiveName } from './directives';
export { fillSchema } from './json-schema-fill';
export { tokenize, countTokens } from './text';
