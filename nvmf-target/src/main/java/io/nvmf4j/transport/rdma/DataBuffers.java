package io.nvmf4j.transport.rdma;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * A poll group's data buffers: equal slices of one registered region, handed out by index. Requests
 * that find none wait in FIFO order; {@link #release} never runs a waiter itself (the poll group does,
 * after its current batch: see {@link #nextWaiter}). Owned by the poll-group thread.
 */
final class DataBuffers {
    private final ByteBuf[] buffers;
    private final long[] addresses;
    private final int[] free;
    private int freeTop;
    private final ArrayDeque<RdmaRequest> waiters;
    private boolean running;
    final int bufferSize;
    final int lkey;

    /**
     * @param region      the registered memory (direct buffer), at least {@code count * bufferSize} bytes
     * @param baseAddress native address of {@code region[offset]}
     */
    DataBuffers(ByteBuffer region, int offset, long baseAddress, int count, int bufferSize, int lkey) {
        this.buffers = new ByteBuf[count];
        this.addresses = new long[count];
        this.free = new int[count];
        this.bufferSize = bufferSize;
        this.lkey = lkey;
        this.waiters = new ArrayDeque<>(count * 2);
        for (int i = 0; i < count; i++) {
            ByteBuffer slice = region.duplicate().position(offset + i * bufferSize).limit(offset + (i + 1) * bufferSize)
                .slice();
            buffers[i] = Unpooled.wrappedBuffer(slice).clear();
            addresses[i] = baseAddress + (long) i * bufferSize;
            free[freeTop++] = count - 1 - i;
        }
    }

    /** A free buffer's index, or -1 after queueing {@code waiter} (once) to be run when one is released. */
    int acquire(RdmaRequest waiter) {
        if (freeTop > 0 && (waiters.isEmpty() || waiters.peekFirst() == waiter)) {
            if (waiters.peekFirst() == waiter) {
                waiters.pollFirst();
                waiter.waitingForBuffer = false;
            }
            return free[--freeTop];
        }
        if (!waiter.waitingForBuffer) {
            waiter.waitingForBuffer = true;
            waiters.addLast(waiter);
        }
        return -1;
    }

    void release(int index) {
        free[freeTop++] = index;
    }

    /** The first waiter when a buffer is free (still queued: its acquire takes it off), else null. */
    RdmaRequest nextWaiter() {
        return freeTop > 0 ? waiters.peekFirst() : null;
    }

    /**
     * Runs waiting requests while buffers are free. Not reentrant: a release inside a waiter's run leaves
     * the rest to the outer loop.
     */
    void runWaiters() {
        if (running) {
            return;
        }
        running = true;
        try {
            RdmaRequest w;
            while ((w = nextWaiter()) != null) {
                ((RdmaQueue) w.queue()).process(w);
                if (waiters.peekFirst() == w) {
                    // not taken off by its acquire (it no longer needs a buffer): never spin on it
                    waiters.pollFirst();
                    w.waitingForBuffer = false;
                }
            }
        } finally {
            running = false;
        }
    }

    /** Drops a waiter (its queue pair is closing). */
    void forget(RdmaRequest waiter) {
        if (waiter.waitingForBuffer) {
            waiters.remove(waiter);
            waiter.waitingForBuffer = false;
        }
    }

    ByteBuf buffer(int index) {
        return buffers[index];
    }

    long address(int index) {
        return addresses[index];
    }

    int available() {
        return freeTop;
    }

    int capacity() {
        return buffers.length;
    }
}
