// The failure converter of every Temporal client and worker of the service:
// the SDK's default, told to move error messages and stack traces into an
// encoded payload, so the payload codec encrypts them like any other data (a
// failed model call's message can quote the user's input). The SDK loads it
// by path (DataConverter.failureConverterPath), also into the workflow
// sandbox: import nothing here but @temporalio/common.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
