// Turns a protobuf service descriptor plus a table of handlers into a grpc-js
// service. Methods without a handler answer UNIMPLEMENTED naming the method, so
// an SDK feature we do not cover fails loudly instead of hanging.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { lookupService, lookupType } from '../proto';
import { RpcError, unimplemented } from '../errors';

export interface CallContext {
  /** Absolute deadline (epoch ms, wall clock) the client gave, if any. */
  deadline?: number;
  /** Resolves when the client cancels or disconnects; used by long polls. */
  cancelled: Promise<void>;
  isCancelled(): boolean;
}

export type Handler = (req: any, ctx: CallContext) => Promise<object> | object;
export type Handlers = Record<string, Handler>;

const TO_OBJECT = { longs: Number, enums: Number, bytes: Buffer, defaults: false } as const;

function lowerFirst(s: string): string {
  return s[0].toLowerCase() + s.slice(1);
}

export function buildService(
  serviceName: string,
  handlers: Handlers,
  logger: Logger,
): { definition: grpc.ServiceDefinition; implementation: grpc.UntypedServiceImplementation } {
  const service = lookupService(serviceName);
  const definition: Record<string, grpc.MethodDefinition<any, any>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of Object.values(service.methods)) {
    const reqType = lookupType(method.resolvedRequestType?.fullName.slice(1) ?? qualify(serviceName, method.requestType));
    const resType = lookupType(method.resolvedResponseType?.fullName.slice(1) ?? qualify(serviceName, method.responseType));
    const key = lowerFirst(method.name);
    definition[key] = {
      path: `/${serviceName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (v: object) => Buffer.from(reqType.encode(v as never).finish()),
      requestDeserialize: (b: Buffer) => reqType.toObject(reqType.decode(b), TO_OBJECT),
      responseSerialize: (v: object) => Buffer.from(resType.encode(v as never).finish()),
      responseDeserialize: (b: Buffer) => resType.toObject(resType.decode(b), TO_OBJECT),
    };
    const handler = handlers[key];
    const fullMethod = `${serviceName.split('.').pop()}/${method.name}`;
    implementation[key] = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
      const started = Date.now();
      let cancelled = false;
      const cancelledP = new Promise<void>((resolve) => {
        call.on('cancelled', () => {
          cancelled = true;
          resolve();
        });
      });
      const deadline = call.getDeadline();
      const ctx: CallContext = {
        deadline: deadline instanceof Date ? deadline.getTime() : Number.isFinite(deadline) ? Number(deadline) : undefined,
        cancelled: cancelledP,
        isCancelled: () => cancelled,
      };
      const finish = (err: unknown, res?: object) => {
        const ms = Date.now() - started;
        if (err) {
          const rpcErr = toRpcError(err);
          const fields = { rpc: fullMethod, code: grpc.status[rpcErr.code], ms };
          if (rpcErr.code === grpc.status.INTERNAL) logger.error({ ...fields, err }, rpcErr.message);
          else logger.warn(fields, `rejected: ${rpcErr.message}`);
          callback({ code: rpcErr.code, details: rpcErr.message, metadata: rpcErr.metadata() });
        } else {
          logger.debug({ rpc: fullMethod, ms }, 'rpc');
          callback(null, res ?? {});
        }
      };
      if (!handler) return finish(unimplemented(fullMethod));
      try {
        const out = handler(call.request, ctx);
        if (out && typeof (out as Promise<object>).then === 'function') {
          (out as Promise<object>).then((res) => finish(null, res), (err) => finish(err));
        } else finish(null, out as object);
      } catch (err) {
        finish(err);
      }
    };
  }
  return { definition: definition as grpc.ServiceDefinition, implementation };
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
