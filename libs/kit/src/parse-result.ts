/**
 * What a protocol's parser makes of one message: the message, or why it is refused. `problem` is the
 * readable reason the protocol answers or closes with; `Refusal` adds what else that answer needs
 * (the id of the request to answer, the protocol's error code).
 */
export type ParseResult<T, Refusal extends object = object> =
  | { readonly ok: true; readonly message: T }
  | ({ readonly ok: false; readonly problem: string } & Readonly<Refusal>);
