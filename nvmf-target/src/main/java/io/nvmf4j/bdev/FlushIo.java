package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;

/** A block-device operation that moves no data (a flush): no range, no buffer, only its completions. */
public abstract class FlushIo implements BdevIo {
    @Override
    public final long offset() {
        return 0;
    }

    @Override
    public final int length() {
        return 0;
    }

    @Override
    public final ByteBuf buffer() {
        return null;
    }
}
