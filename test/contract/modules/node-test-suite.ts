/** contractSuite under node:test (spawned by suite.test.ts): `node --import tsx --test <this file>`. */
import { it } from "node:test";
import { contractSuite } from "../../../src/testing/index.js";
import { createFakeOrders, makeOrderTools } from "../../../examples/orders/index.js";

const [getOrder] = makeOrderTools(createFakeOrders());
contractSuite(getOrder, { it, runs: 40, drift: { runs: 60, targets: ["mcp", "openai"] } });
