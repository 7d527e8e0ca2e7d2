package io.nvmf4j.transport.rdma;

import io.nvmf4j.rdma.DeviceAttributes;
import io.nvmf4j.rdma.Errno;
import io.nvmf4j.rdma.Rdma;
import io.nvmf4j.rdma.Verbs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/** One RDMA device as the transport uses it: its PD, attributes and one poll group per event loop. */
final class RdmaDevice {
    final long context;
    final String name;
    final long pd;
    final DeviceAttributes attributes;
    final List<RdmaPollGroup> groups = new ArrayList<>();
    /** The LAST_WQE_REACHED timeout was logged for this device (once). */
    final AtomicBoolean lastWqeTimeoutLogged = new AtomicBoolean();

    RdmaDevice(long context) throws IOException {
        this.context = context;
        this.name = Rdma.deviceName(context);
        this.attributes = Rdma.queryDevice(context);
        long p = Verbs.allocPd(context);
        if (p < 0) {
            throw new IOException("ibv_alloc_pd on " + name + ": " + Errno.describe((int) p));
        }
        this.pd = p;
    }

    /** Largest queue depth the device can hold per queue pair. */
    int maxDepth() {
        return Math.max(1, attributes.maxQpWr() / QueuePair.WRS_PER_REQUEST - RdmaQueue.requestCount(0));
    }

    /** The least loaded poll group that has CQ room for {@code depth}, reserved; null when none has. */
    RdmaPollGroup place(int depth) {
        RdmaPollGroup best = null;
        for (RdmaPollGroup g : groups) {
            if (best == null || g.load() < best.load()) {
                best = g;
            }
        }
        if (best != null && best.reserve(depth)) {
            return best;
        }
        for (RdmaPollGroup g : groups) {
            if (g != best && g.reserve(depth)) {
                return g;
            }
        }
        return null;
    }
}
