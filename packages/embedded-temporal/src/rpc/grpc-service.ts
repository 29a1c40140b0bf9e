// Turns a protobuf service descriptor plus a table of handlers into a grpc-js
// service. Methods without a handler answer UNIMPLEMENTED naming the method, so
// an SDK feature we do not cover fails loudly instead of hanging. Every call gets
// one debug log line; every rejected call also gets one warn line (error for
// INTERNAL, which always means a server bug).
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { lookupService, lookupType } from '../proto';
import { RpcError, messageTooLarge, undecodableRequest, unimplemented } from '../errors';
import { GRPC_MAX_RECEIVE_BYTES } from '../engine/limits';

export interface CallContext {
  /** Absolute deadline (epoch ms, wall clock) the client gave, if any. */
  deadline?: number;
  /** Resolves when the client cancels or disconnects; used by long polls. */
  cancelled: Promise<void>;
  isCancelled(): boolean;
  /** The caller's client-name header (temporal-typescript, temporal-cli...). */
  clientName?: string;
}

export type Handler = (req: any, ctx: CallContext) => Promise<object> | object;
export type Handlers = Record<string, Handler>;
/** Runs before the handler (e.g. request-checks.ts); throws an RpcError to reject. `method` is "Service/Method". */
export type Precheck = (method: string, req: any, ctx: CallContext) => void;

const TO_OBJECT = { longs: Number, enums: Number, bytes: Buffer, defaults: false } as const;

/** Stands in for a request whose bytes did not decode, so the call is answered by us, not by grpc-js. */
class Undecodable {
  constructor(readonly reason: string) {}
}

/** Stands in for a request past the frontend's receive limit (not decoded at all). */
class Oversized {
  constructor(readonly size: number) {}
}

function lowerFirst(s: string): string {
  return s[0].toLowerCase() + s.slice(1);
}

export function buildService(
  serviceName: string,
  handlers: Handlers,
  logger: Logger,
  precheck?: Precheck,
): { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation } {
  const service = lookupService(serviceName);
  const definition: Record<string, grpc.MethodDefinition<any, any>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of Object.values(service.methods)) {
    const key = lowerFirst(method.name);
    definition[key] = methodDefinition(serviceName, method);
    const fullMethod = `${serviceName.split('.').pop()}/${method.name}`;
    implementation[key] = unaryCall(fullMethod, handlers[key], logger, precheck);
  }
  return { definition: definition as grpc.ServiceDefinition, implementation };
}

type Method = ReturnType<typeof lookupService>['methods'][string];

/** The method's path and (de)serializers, from its request and response types. */
function methodDefinition(serviceName: string, method: Method): grpc.MethodDefinition<any, any> {
  const reqType = lookupType(method.resolvedRequestType?.fullName.slice(1) ?? qualify(serviceName, method.requestType));
  const resType = lookupType(
    method.resolvedResponseType?.fullName.slice(1) ?? qualify(serviceName, method.responseType),
  );
  return {
    path: `/${serviceName}/${method.name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: (v: object) => Buffer.from(reqType.encode(v as never).finish()),
    // grpc-js answers a throwing deserializer with INTERNAL and never calls us, so
    // undecodable bytes become a marker the call handler rejects (and logs) itself.
    requestDeserialize: (b: Buffer) => {
      if (b.length > GRPC_MAX_RECEIVE_BYTES) return new Oversized(b.length);
      try {
        // Decode from an exact-size copy: payload bytes kept in history would
        // otherwise pin the 8 KiB pool slab the request arrived in.
        return reqType.toObject(reqType.decode(new Uint8Array(b)), TO_OBJECT);
      } catch (err) {
        return new Undecodable(err instanceof Error ? err.message : String(err));
      }
    },
    responseSerialize: (v: object) => Buffer.from(resType.encode(v as never).finish()),
    responseDeserialize: (b: Buffer) => resType.toObject(resType.decode(b), TO_OBJECT),
  };
}

/** The grpc-js implementation of one method: its handler (or UNIMPLEMENTED) behind the precheck, logged. */
function unaryCall(fullMethod: string, handler: Handler | undefined, logger: Logger, precheck?: Precheck) {
  return (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
    const started = Date.now();
    const ctx = callContext(call);
    const req = call.request;
    const namespace =
      req instanceof Undecodable || req instanceof Oversized || typeof req?.namespace !== 'string' || !req.namespace
        ? undefined
        : req.namespace;
    const finish = answer(callback, logger, { rpc: fullMethod, namespace, started });
    if (!handler) return finish(unimplemented(fullMethod));
    if (req instanceof Undecodable) return finish(undecodableRequest(req.reason));
    if (req instanceof Oversized) return finish(messageTooLarge(req.size, GRPC_MAX_RECEIVE_BYTES));
    try {
      precheck?.(fullMethod, req, ctx);
      const out = handler(req, ctx);
      if (out && typeof (out as Promise<object>).then === 'function') {
        (out as Promise<object>).then(
          (res) => finish(null, res),
          (err) => finish(err),
        );
      } else finish(null, out as object);
    } catch (err) {
      finish(err);
    }
  };
}

/** The call's deadline, cancellation and client name, as handlers see them. */
function callContext(call: grpc.ServerUnaryCall<any, any>): CallContext {
  let cancelled = false;
  const cancelledP = new Promise<void>((resolve) => {
    call.on('cancelled', () => {
      cancelled = true;
      resolve();
    });
  });
  const deadline = call.getDeadline();
  return {
    deadline: deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined,
    cancelled: cancelledP,
    isCancelled: () => cancelled,
    clientName: call.metadata?.get('client-name')[0]?.toString(),
  };
}

/** Answers the call (a result, or an error as its gRPC status) and logs it: debug always, warn or error when rejected. */
function answer(
  callback: grpc.sendUnaryData<any>,
  logger: Logger,
  call: { rpc: string; namespace: string | undefined; started: number },
): (err: unknown, res?: object) => void {
  const { rpc, namespace, started } = call;
  return (err, res) => {
    const ms = Date.now() - started;
    if (!err) {
      logger.debug({ rpc, namespace, code: 'OK', ms }, 'rpc');
      callback(null, res ?? {});
      return;
    }
    const rpcErr = toRpcError(err);
    const fields = { rpc, namespace, code: grpc.status[rpcErr.code], ms };
    logger.debug(fields, 'rpc');
    if (rpcErr.code === grpc.status.INTERNAL) logger.error({ ...fields, err, error: rpcErr.message }, 'internal error');
    else logger.warn({ ...fields, error: rpcErr.message }, 'rejected request');
    callback({ code: rpcErr.code, details: rpcErr.message, metadata: rpcErr.metadata() });
  };
}

function qualify(serviceName: string, typeName: string): string {
  if (typeName.includes('.')) return typeName.replace(/^\./, '');
  return serviceName.split('.').slice(0, -1).concat(typeName).join('.');
}

function toRpcError(err: unknown): RpcError {
  if (err instanceof RpcError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new RpcError(grpc.status.INTERNAL, `internal error: ${message}`);
}
