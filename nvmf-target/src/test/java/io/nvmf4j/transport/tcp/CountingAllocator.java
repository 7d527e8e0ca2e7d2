package io.nvmf4j.transport.tcp;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

import java.util.ArrayList;
import java.util.List;

/** The pooled allocator, counting the buffers of at least a given size and keeping every buffer it gives. */
final class CountingAllocator extends AbstractByteBufAllocator {
    private final ByteBufAllocator pool = PooledByteBufAllocator.DEFAULT;
    private final List<ByteBuf> given = new ArrayList<>();
    private final int largeBytes;
    private int large;

    /** Counts the buffers of {@code largeBytes} or more as large. */
    CountingAllocator(int largeBytes) {
        super(true);
        this.largeBytes = largeBytes;
    }

    /** Buffers of the large size or more handed out so far. */
    int large() {
        return large;
    }

    /** Buffers handed out so far. */
    int given() {
        return given.size();
    }

    /** The buffers handed out that are still referenced. */
    List<ByteBuf> leaked() {
        return given.stream().filter(b -> b.refCnt() > 0).toList();
    }

    private ByteBuf keep(ByteBuf b) {
        given.add(b);
        if (b.capacity() >= largeBytes) {
            large++;
        }
        return b;
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return keep(pool.heapBuffer(initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return keep(pool.directBuffer(initialCapacity, maxCapacity));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return true;
    }
}
