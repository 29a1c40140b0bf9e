// A compile-time check that pins a response schema to the TypeScript type the code
// really returns (response-schemas.ts, schedule-response-schemas.ts).

/** Rebuilds a type member by member, so `A & B` and the flat object it means compare equal. */
export type Norm<T> = T extends object ? { [K in keyof T]: Norm<T[K]> } : T;

/**
 * true only when A and B are the same type, deeply: unlike mutual
 * assignability this also catches an optional field present on one side only.
 */
type Same<A, B> = (<T>() => T extends Norm<A> ? 1 : 2) extends <T>() => T extends Norm<B> ? 1 : 2 ? true : false;

/** Compile-time only: `same<X, Y>(true)` does not type-check unless X and Y match. */
export function same<A, B>(ok: Same<A, B>): Same<A, B> {
  return ok;
}
