/**
 * The shape ts-proto generates for each method of a `…Service` definition (outputServices=
 * grpc-js), as the client and server wrappers read it: one definition, both directions.
 */
interface MethodDefinition<Req, Res, ResponseStream extends boolean> {
  path: string;
  requestStream: false;
  responseStream: ResponseStream;
  requestSerialize: (value: Req) => Buffer;
  requestDeserialize: (value: Buffer) => Req;
  responseSerialize: (value: Res) => Buffer;
  responseDeserialize: (value: Buffer) => Res;
}

export type UnaryMethodDefinition<Req, Res> = MethodDefinition<Req, Res, false>;
export type ServerStreamingMethodDefinition<Req, Res> = MethodDefinition<Req, Res, true>;
