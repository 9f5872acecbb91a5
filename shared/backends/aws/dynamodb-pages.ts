/**
 * Reading a query or a scan past its first page. The SDK's paginators (`paginateQuery`,
 * `paginateScan` of lib-dynamodb) follow `LastEvaluatedKey`; `queryItems` and `scanItems` gather
 * their items and stop asking for pages once they hold `want` of them. A caller that handles each
 * page as it comes (a scan over a whole table) uses the paginator itself.
 */
import {
  type DynamoDBDocumentClient,
  paginateQuery,
  paginateScan,
  type QueryCommandInput,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';

export type DynamoDbItem = Record<string, unknown>;

/** The items a query finds, page after page, until `want` of them (default: all) are read. */
export function queryItems(
  client: DynamoDBDocumentClient,
  input: QueryCommandInput,
  want = Number.POSITIVE_INFINITY,
): Promise<DynamoDbItem[]> {
  return collect(paginateQuery({ client }, input), want);
}

/** The items a scan finds, page after page, until `want` of them (default: all) are read. */
export function scanItems(
  client: DynamoDBDocumentClient,
  input: ScanCommandInput,
  want = Number.POSITIVE_INFINITY,
): Promise<DynamoDbItem[]> {
  return collect(paginateScan({ client }, input), want);
}

async function collect(
  pages: AsyncIterable<{ Items?: DynamoDbItem[] }>,
  want: number,
): Promise<DynamoDbItem[]> {
  const items: DynamoDbItem[] = [];
  for await (const page of pages) {
    items.push(...(page.Items ?? []));
    if (items.length >= want) break;
  }
  return items.slice(0, want);
}
