package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.nvme.Opcodes;

import java.util.List;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * I/O counts, bytes and latency sums of one host or one controller. {@link #record} runs on poll-group threads
 * (any of them, concurrently) and only adds to {@link LongAdder} cells (striped under contention, no lock, no
 * allocation once a cell exists); readers sum the cells ({@link #totals()}). Meters that read these cells are
 * registered with {@link #register} (function counters: nothing more per I/O).
 */
final class IoCounts {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder others = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final LongAdder readNanos = new LongAdder();
    private final LongAdder writeNanos = new LongAdder();
    private final LongAccumulator maxNanos = new LongAccumulator(Math::max, 0);

    /** One completed I/O command (fabrics commands on an I/O queue are not I/O: not counted, as per namespace). */
    void record(int opcode, int bytes, long latencyNanos, int status) {
        switch (opcode) {
            case Opcodes.IO_READ -> {
                reads.increment();
                bytesRead.add(bytes);
                readNanos.add(latencyNanos);
            }
            case Opcodes.IO_WRITE -> {
                writes.increment();
                bytesWritten.add(bytes);
                writeNanos.add(latencyNanos);
            }
            case Opcodes.FABRICS -> {
                return;
            }
            default -> others.increment();
        }
        maxNanos.accumulate(latencyNanos);
        if (!NvmeStatus.isSuccess(status)) {
            errors.increment();
        }
    }

    /** The sums now (each cell read once; a record running meanwhile may show in one sum and not yet another). */
    IoTotals totals() {
        return new IoTotals(reads.sum(), writes.sum(), others.sum(), bytesRead.sum(), bytesWritten.sum(),
            errors.sum(), readNanos.sum(), writeNanos.sum(), maxNanos.get());
    }

    /**
     * Function counters over these cells: {@code <prefix>.io.commands{op}}, {@code <prefix>.io.bytes{op}},
     * {@code <prefix>.io.latency.seconds{op}} (sum of latencies) and {@code <prefix>.io.errors}, with {@code tags}.
     *
     * @return the meters, for {@link MeterRegistry#remove} when the host or controller goes
     */
    List<Meter> register(MeterRegistry registry, String prefix, String what, Tags tags) {
        return List.of(
            counter(registry, prefix + ".io.commands", "I/O commands completed " + what, tags, MetricNames.OP_READ,
                c -> c.reads.sum(), null),
            counter(registry, prefix + ".io.commands", "I/O commands completed " + what, tags, MetricNames.OP_WRITE,
                c -> c.writes.sum(), null),
            counter(registry, prefix + ".io.commands", "I/O commands completed " + what, tags, MetricNames.OP_OTHER,
                c -> c.others.sum(), null),
            counter(registry, prefix + ".io.bytes", "data bytes of successful reads and writes " + what, tags,
                MetricNames.OP_READ, c -> c.bytesRead.sum(), "bytes"),
            counter(registry, prefix + ".io.bytes", "data bytes of successful reads and writes " + what, tags,
                MetricNames.OP_WRITE, c -> c.bytesWritten.sum(), "bytes"),
            counter(registry, prefix + ".io.latency.seconds", "sum of I/O latencies " + what
                + " (mean = its rate / the commands' rate)", tags, MetricNames.OP_READ, c -> c.readNanos.sum() / 1e9,
                null),
            counter(registry, prefix + ".io.latency.seconds", "sum of I/O latencies " + what
                + " (mean = its rate / the commands' rate)", tags, MetricNames.OP_WRITE,
                c -> c.writeNanos.sum() / 1e9, null),
            FunctionCounter.builder(prefix + ".io.errors", this, c -> c.errors.sum())
                .description("I/O commands completed with an error " + what).tags(tags).register(registry));
    }

    private FunctionCounter counter(MeterRegistry registry, String name, String description, Tags tags, String op,
                                    ToDoubleFunction<IoCounts> value, String unit) {
        return FunctionCounter.builder(name, this, value).description(description).baseUnit(unit).tags(tags)
            .tag(MetricNames.TAG_OP, op).register(registry);
    }
}
