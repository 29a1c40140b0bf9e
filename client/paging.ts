// Walks a cursor-paged listing (GET /tasks, GET /sessions) item by item,
// asking for the next page only when the iteration gets there.
export async function* eachItem<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next_cursor: string | null }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    yield* p.items;
    cursor = p.next_cursor ?? undefined;
  } while (cursor);
}
