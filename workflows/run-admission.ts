// A run's admission and its release: the session's turn (runs of a session
// never interleave) and, for background tasks, one of the account's running
// slots. Both are held across continue-as-new and given back at the run's end.
import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { TaskInput, ThreadMessage } from './types';
import { sessionWorkflowId } from './types';
import {
  acquireSignal,
  enqueueSignal,
  type Handover,
  handoverQuery,
  releaseSignal,
  slotGrantedSignal,
  slotsWorkflowId,
  turnDoneSignal,
  turnGrantedSignal,
} from './definitions';

/**
 * How long a run the gateway enqueued waits for its turn before joining its
 * session itself (a no-op when it is already in the queue): long enough not to
 * fire while a loaded worker catches up with a burst of submits.
 */
const JOIN_GRACE_MS = 30_000;

const fallbacks = proxyActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
});

/** How the run's slot goes back: by its end activity (publishEnd), or, empty, already given back or none held. */
export interface SlotRelease {
  releaseSlot?: { account: string };
}

/** The largest exchange (JSON characters) a run hands its session on the signal itself. */
const INLINE_EXCHANGE_CHARS = 4096;

export class Admission {
  /** Messages of the session's thread before this run (set when the turn comes). */
  sessionMessages: number | undefined;
  /** The handoff agent the session's last completed run ended with (set when the turn comes). */
  sessionAgent: string | undefined;
  holdsTurn = false;
  holdsSlot = false;
  /** Holds the turn of a session not opened yet (TaskAdmission.lazySession): its end signals no session. */
  lazyTurn = false;
  /** What release handed over (handoverQuery); null until then. */
  handover: Handover | null = null;
  private slotGranted = false;
  private readonly session;
  private readonly slots;

  constructor(private readonly input: TaskInput) {
    this.session = getExternalWorkflowHandle(sessionWorkflowId(input.account, input.session));
    this.slots = getExternalWorkflowHandle(slotsWorkflowId(input.account));
    const carry = input.carry;
    if (carry) {
      this.holdsTurn = carry.holdsTurn;
      this.holdsSlot = this.slotGranted = carry.holdsSlot;
      this.sessionMessages = carry.sessionMessages;
      this.lazyTurn = carry.lazyTurn === true;
    }
    setHandler(handoverQuery, () => this.handover);
    setHandler(turnGrantedSignal, ({ session, messages, agent }) => {
      // Only this task's own session hands it the turn.
      if (session !== input.session) return;
      this.sessionMessages = messages;
      this.sessionAgent = agent;
    });
    setHandler(slotGrantedSignal, () => void (this.slotGranted = true));
  }

  /** Waits for the session's turn, then (background tasks) for a slot. */
  async acquire(): Promise<void> {
    await this.awaitTurn();
    const { slots } = this.input.admission;
    if (slots && !this.holdsSlot) await this.awaitSlot(slots.limit);
  }

  /**
   * A finished task rewound: its run, replayed to before the turn it went back to, believes it
   * holds its session's turn and slot, which its first end gave back. It takes them again, in
   * the session's order; the thread it reads stays as it was then (its count of session messages).
   */
  async rejoin(): Promise<void> {
    const kept = this.sessionMessages;
    this.sessionMessages = undefined;
    this.holdsTurn = true;
    // Granted by the session from here on (opened now if it never was): the end hands the turn back to it.
    this.lazyTurn = false;
    this.handover = null;
    await this.join();
    await condition(() => this.sessionMessages !== undefined);
    this.sessionMessages = kept;
    this.holdsSlot = this.slotGranted = false;
    const { slots } = this.input.admission;
    if (slots) await this.awaitSlot(slots.limit);
  }

  private async awaitTurn(): Promise<void> {
    if (this.holdsTurn) return;
    const { ownsTurn, joinsSession, joinGraceMs } = this.input.admission;
    this.holdsTurn = true; // from here on the session must hear back from this run, whatever happens
    // The gateway opened the session with this run holding the turn (or opens none: lazySession): an
    // empty thread, nothing to wait for.
    if (ownsTurn) this.sessionMessages = 0;
    if (ownsTurn && this.input.admission.lazySession) this.lazyTurn = true;
    const granted = () => this.sessionMessages !== undefined;
    if (joinsSession) {
      await this.join();
    } else if (!(await condition(granted, joinGraceMs ?? JOIN_GRACE_MS))) {
      // The gateway died before enqueueing the run, or the session offered the turn before the run existed.
      await this.join();
    }
    await condition(granted);
  }

  /** Puts the run in its session's turn order (a no-op when it is there already), reopening a closed session. */
  private async join(): Promise<void> {
    await this.session.signal(enqueueSignal, { taskId: this.input.taskId }).catch(async () => {
      await fallbacks.joinSession({
        taskId: this.input.taskId,
        account: this.input.account,
        session: this.input.session,
      });
    });
  }

  private async awaitSlot(limit: number): Promise<void> {
    this.holdsSlot = true;
    const request = { taskId: this.input.taskId, limit, createdAt: this.input.createdAt };
    await this.slots
      .signal(acquireSignal, request)
      .catch(() => fallbacks.requestSlot({ ...request, account: this.input.account }));
    await condition(() => this.slotGranted);
  }

  /**
   * Gives the turn back and says how the slot goes back: `messages` join the session's thread (a
   * completed run's exchange), and a completed run tells the session which agent has the
   * conversation. The slot is given back by the run's end activity (publishEnd's releaseSlot, which
   * the answer names), sparing the run a workflow task; runs started without slots.releasedByEnd
   * give it back by a signal.
   */
  async release(messages: ThreadMessage[], handoff?: { agent: string | null }): Promise<SlotRelease> {
    const { taskId, account, session } = this.input;
    const { ownsTurn } = this.input.admission;
    const byEnd = this.holdsSlot && this.input.admission.slots?.releasedByEnd === true;
    const slot =
      this.holdsSlot && !byEnd ? this.slots.signal(releaseSignal, { taskId }).catch(() => undefined) : undefined;
    // Only runs with handoff agents say which has the conversation: other histories stay as they were.
    // A large exchange stays out of the signal (it would be one more copy of the answer in this run's
    // history): the session reads it from the run (exchangeQuery).
    const inline = JSON.stringify(messages).length <= INLINE_EXCHANGE_CHARS;
    const done = {
      taskId,
      messages: inline ? messages : [],
      ...(!inline && { byQuery: true as const }),
      ...(handoff && { agent: handoff.agent }),
    };
    this.handover = { messages, ...(handoff && { agent: handoff.agent }) };
    // A session not opened yet is told nothing: if something opens it, it reads the handover from this run.
    const turn =
      this.holdsTurn && !this.lazyTurn
        ? this.session.signal(turnDoneSignal, done).catch(async () => {
            // A run holding its turn from the start finds no session only if the gateway's start of it never
            // happened: create it now, so the thread the client was promised exists.
            if (ownsTurn) await fallbacks.finishTurn({ account, session, ...done }).catch(() => undefined);
          })
        : undefined;
    if (slot || turn) await CancellationScope.nonCancellable(() => Promise.all([slot, turn]));
    this.holdsSlot = this.holdsTurn = false;
    return byEnd ? { releaseSlot: { account } } : {};
  }
}
