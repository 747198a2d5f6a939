/**
 * The orders example as a module `toolgate serve` can load: its default export is the tools,
 * over the in-memory fake service.
 */
import { createFakeOrders } from "./service.js";
import { makeOrderTools } from "./tools.js";

export { createFakeOrders, makeOrderTools };
export default makeOrderTools(createFakeOrders());
