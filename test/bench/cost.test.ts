// The cost phase's count of a history's Temporal work (bench/cost.ts workOf): one count per
// workflow task (its completion), per activity and local activity, signal in and out, update,
// timer, child and upsert, named by what each is.
import { workOf } from '../../bench/cost';

test('a history counted by kind of work', () => {
  const events = [
    { workflowExecutionStartedEventAttributes: {} },
    { workflowTaskScheduledEventAttributes: {} },
    { workflowTaskStartedEventAttributes: {} },
    { workflowTaskCompletedEventAttributes: {} },
    { activityTaskScheduledEventAttributes: { activityType: { name: 'modelTurn' } } },
    { markerRecordedEventAttributes: { markerName: 'core_local_activity' } },
    { markerRecordedEventAttributes: { markerName: 'core_patch' } },
    { workflowExecutionSignaledEventAttributes: { signalName: 'slotGranted' } },
    { signalExternalWorkflowExecutionInitiatedEventAttributes: { signalName: 'release' } },
    { workflowExecutionUpdateAcceptedEventAttributes: { acceptedRequest: { input: { name: 'reserve' } } } },
    { timerStartedEventAttributes: {} },
    { upsertWorkflowSearchAttributesEventAttributes: {} },
    { workflowTaskCompletedEventAttributes: {} },
  ];
  expect(workOf(events)).toEqual({
    'workflow tasks': 2,
    'activity modelTurn': 1,
    'marker local activity': 1,
    'marker patch': 1,
    'signal in slotGranted': 1,
    'signal out release': 1,
    'update reserve': 1,
    timer: 1,
    'search attributes upsert': 1,
    events: 13,
  });
});
