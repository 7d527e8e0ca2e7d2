package io.nvmf4j.rdma;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * An array of native structs allocated once by the library (64-byte aligned, zeroed), behind a
 * small header that records its kind and capacity so that the natives reject a wrong array or
 * an out-of-range index with {@code -EINVAL}. Java reads and writes the structs in place through
 * a direct buffer in native byte order, at offsets exported by the library.
 *
 * <p>Not thread-safe: an array belongs to the thread that owns its queue. Accessing it after
 * {@link #close()} reads freed memory.
 */
abstract class NativeArray implements AutoCloseable {
    static final int HEADER = Layout.intValue("array.header_size");
    private static final int BAD_INDEX = Layout.intValue("array.bad_index");

    final ByteBuffer buffer;
    final long address;
    final int capacity;
    private boolean closed;

    NativeArray(String kind, int capacity, int maxSge) {
        Rdma.ensureLibraryLoaded();
        if (capacity <= 0 || maxSge < 0 || maxSge > 64) {
            throw new IllegalArgumentException("capacity " + capacity + ", maxSge " + maxSge);
        }
        ByteBuffer b = Native.allocArray(Layout.intValue("array.kind." + kind), capacity, maxSge);
        if (b == null) {
            throw new OutOfMemoryError("native " + kind + " array of " + capacity);
        }
        this.buffer = b.order(ByteOrder.nativeOrder());
        this.address = Native.bufferAddress(b);
        this.capacity = capacity;
    }

    /** Number of entries. */
    public final int capacity() {
        return capacity;
    }

    /** Native address of the array (its header), as the natives take it. */
    public final long address() {
        return address;
    }

    /** After a failed post: index of the first work request that was not posted; -1 after a success. */
    public final int badIndex() {
        return buffer.getInt(BAD_INDEX);
    }

    @Override
    public final void close() {
        if (!closed) {
            closed = true;
            Native.freeArray(address);
        }
    }
}
