package io.nvmf4j.service.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.nvmf4j.nvme.NvmeStatus;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Counters by NVMe status (tag {@code status="<sct>/0x<sc>"}, DNR ignored) for one set of tags. A lookup is
 * two array reads, SCT then SC, so counting an error that was seen before allocates nothing; the first error
 * with a new status creates its counter under the monitor.
 */
final class StatusCounters {
    private static final int SCT_COUNT = 8;
    private static final int SC_COUNT = 256;

    private final MeterRegistry registry;
    private final String name;
    private final String description;
    private final Tags tags;
    private final AtomicReferenceArray<AtomicReferenceArray<Counter>> bySct = new AtomicReferenceArray<>(SCT_COUNT);

    StatusCounters(MeterRegistry registry, String name, String description, Tags tags) {
        this.registry = registry;
        this.name = name;
        this.description = description;
        this.tags = tags;
    }

    /** The status tag value: SCT and SC, e.g. {@code 0/0x80} for LBA Out of Range. */
    static String statusTag(int status) {
        return NvmeStatus.sct(status) + "/0x" + String.format("%02x", NvmeStatus.sc(status));
    }

    void increment(int status) {
        AtomicReferenceArray<Counter> bySc = bySct.get(NvmeStatus.sct(status));
        Counter c = bySc == null ? null : bySc.get(NvmeStatus.sc(status));
        if (c == null) {
            c = create(status);
        }
        c.increment();
    }

    private synchronized Counter create(int status) {
        int sct = NvmeStatus.sct(status);
        AtomicReferenceArray<Counter> bySc = bySct.get(sct);
        if (bySc == null) {
            bySc = new AtomicReferenceArray<>(SC_COUNT);
            bySct.set(sct, bySc);
        }
        Counter c = bySc.get(NvmeStatus.sc(status));
        if (c == null) {
            c = Counter.builder(name).description(description).tags(tags)
                .tag(MetricNames.TAG_STATUS, statusTag(status)).register(registry);
            bySc.set(NvmeStatus.sc(status), c);
        }
        return c;
    }

    synchronized void remove() {
        for (int sct = 0; sct < SCT_COUNT; sct++) {
            AtomicReferenceArray<Counter> bySc = bySct.get(sct);
            for (int sc = 0; bySc != null && sc < SC_COUNT; sc++) {
                Counter c = bySc.get(sc);
                if (c != null) {
                    registry.remove(c);
                }
            }
        }
    }
}
