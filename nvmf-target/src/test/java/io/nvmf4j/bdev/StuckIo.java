package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;

import java.util.concurrent.CountDownLatch;

/**
 * A 512-byte I/O at offset 0 that holds the thread taking it until the test releases it: a file bdev's worker
 * blocks in {@link #buffer()} (a slow disk), a thread completing it from elsewhere blocks in
 * {@link #bdevCompleteAsync} (an error bdev's timer kept busy). {@link #entered} counts down when a thread is held.
 */
final class StuckIo implements BdevIo {
    private static final int LENGTH = 512;

    final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch release;
    private final TestIo inner = TestIo.of(0, LENGTH);
    volatile int status = -1;

    StuckIo(CountDownLatch release) {
        this.release = release;
    }

    @Override
    public long offset() {
        return 0;
    }

    @Override
    public int length() {
        return LENGTH;
    }

    @Override
    public ByteBuf buffer() {
        holdUntilReleased();
        return inner.buffer();
    }

    @Override
    public void bdevComplete(int s) {
        status = s;
        inner.close();
    }

    @Override
    public void bdevCompleteAsync(int s) {
        holdUntilReleased();
        bdevComplete(s);
    }

    private void holdUntilReleased() {
        entered.countDown();
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
