/** Test wiring: real OpenTelemetry SDK pieces with in-memory exporters, and an async context manager. */
import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT_CONTEXT, context, type Context, type ContextManager } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from "@opentelemetry/sdk-metrics";

/** The SDK's own ALS manager lives in a package we do not have; this is the same idea in a few lines. */
class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

let installed = false;
/** Install an async context manager globally (once per test file). */
export function installContextManager(): void {
  if (installed) return;
  installed = true;
  context.setGlobalContextManager(new AlsContextManager());
}

/** A tracer provider whose spans land in memory. */
export function memoryTracing(): { provider: BasicTracerProvider; exporter: InMemorySpanExporter; spans(): ReadableSpan[] } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { provider, exporter, spans: () => exporter.getFinishedSpans() };
}

/** A meter provider whose metrics are read on demand. */
export function memoryMetrics(): { provider: MeterProvider; collect(): Promise<MetricData[]>; shutdown(): Promise<void> } {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      return exporter.getMetrics().flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics));
    },
    shutdown: () => provider.shutdown(),
  };
}
