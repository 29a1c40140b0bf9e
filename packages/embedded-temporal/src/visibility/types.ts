// Public shapes of the visibility query module. They live apart from query.ts so the
// internal modules can share them without importing the entry point (no cycles).

export type SearchAttributeType = 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

export type ExecutionStatusName =
  'Running' | 'Completed' | 'Failed' | 'Canceled' | 'Terminated' | 'ContinuedAsNew' | 'TimedOut';

export interface VisibilityRecord {
  workflowId: string;
  runId: string;
  workflowType: string;
  taskQueue: string;
  status: ExecutionStatusName;
  startTime: number; // epoch ms
  executionTime: number; // epoch ms
  closeTime?: number; // epoch ms, absent while running
  historyLength?: number;
  parentWorkflowId?: string;
  rootWorkflowId?: string;
  // Optional extras: the real server exposes these as system search attributes, so
  // queries naming them compile; records that leave them out simply never match.
  parentRunId?: string;
  rootRunId?: string;
  historySizeBytes?: number;
  stateTransitionCount?: number;
  /** custom search attributes, decoded: string | number | boolean | string[] | Date-as-ISO-string */
  searchAttributes: Record<string, unknown>;
}

export interface OrderByItem {
  /** attribute name as written in the query */
  attribute: string;
  direction: 'ASC' | 'DESC';
}

/** One value a record sorts by; null when the record has none (it sorts last). */
export type SortValue = string | number | boolean | bigint | null;

/** An order over records through their sort keys (the last element of a key is the RunId). */
export interface RecordOrder {
  /** The number of values in a key. */
  readonly size: number;
  keyOf(r: VisibilityRecord): SortValue[];
  compareKeys(a: readonly SortValue[], b: readonly SortValue[]): number;
}

export interface CompiledQuery {
  matches(r: VisibilityRecord): boolean;
  /** comparator for ORDER BY if given, else undefined (engine then sorts StartTime DESC, RunId) */
  compare?: (a: VisibilityRecord, b: VisibilityRecord) => number;
  /** the same order as sort keys (what a page token keeps), present only when the query had an ORDER BY */
  order?: RecordOrder;
  /** the parsed ORDER BY list, present only when the query had one */
  orderBy?: readonly OrderByItem[];
  /** GROUP BY attributes (only ever ['ExecutionStatus']); present only when compiled with allowGroupBy */
  groupBy?: readonly string[];
}

export interface CompileOptions {
  /**
   * CountWorkflowExecutions accepts `GROUP BY ExecutionStatus`; ListWorkflowExecutions rejects
   * it. The engine says which one it is serving, so the error comes from one place.
   */
  allowGroupBy?: boolean;
}
