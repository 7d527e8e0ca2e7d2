package io.nvmf4j.bdev;

import io.nvmf4j.os.FileNative;

import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;

/**
 * The file block device's asynchronous I/O: {@code workers} threads run the system calls, so at most that
 * many I/Os are in the kernel at once (the device's depth), and every request beyond them waits in a FIFO
 * and starts, in order, as a worker frees. Nothing is refused: the FIFO starts with {@code queueDepth}
 * preallocated slots and grows (doubling, never shrinking) past them, since the hosts' queue sizes bound
 * what can be outstanding anyway.
 *
 * <p>Submitters (the poll-group threads) only append to the FIFO under a short monitor and never wait for
 * the disk. A request is the {@link BdevIo} itself plus an operation code in parallel arrays: nothing is
 * allocated per I/O on either side (the monitor's wait and notify allocate nothing on the heap).
 * {@link #close()} lets the workers drain the FIFO and waits for every outstanding I/O.
 */
final class FileIoQueue {
    private static final Logger LOG = LoggerFactory.getLogger(FileIoQueue.class);
    /** How long {@link #close()} waits for the workers before it logs that it is still waiting. */
    private static final long CLOSE_LOG_INTERVAL_MS = 10_000;

    /** Runs one operation on a worker and returns its NVMe status (FileBdev::execute, built once). */
    @FunctionalInterface
    interface Executor {
        int execute(BdevIo io, int op, Worker worker);
    }

    /** A worker thread and its own bounce buffer (for O_DIRECT alignment and buffers without an address). */
    static final class Worker extends Thread {
        static final int BOUNCE_SIZE = 2 << 20;
        private final FileIoQueue queue;
        private ByteBuffer bounce;
        private long bounceAddress;

        private Worker(FileIoQueue queue, String name) {
            super(name);
            this.queue = queue;
            setDaemon(true);
        }

        /** A 4 KiB-aligned direct buffer of {@link #BOUNCE_SIZE} bytes, allocated on first use. */
        ByteBuffer bounce() {
            if (bounce == null) {
                bounce = ByteBuffer.allocateDirect(BOUNCE_SIZE + 4096).alignedSlice(4096);
                bounce.limit(BOUNCE_SIZE);
                bounce = bounce.slice();
                bounceAddress = FileNative.bufferAddress(bounce);
            }
            return bounce;
        }

        /** Native address of {@link #bounce()}. */
        long bounceAddress() {
            bounce();
            return bounceAddress;
        }

        @Override
        public void run() {
            queue.work(this);
        }
    }

    private final String name;
    private final Executor executor;
    private final Worker[] workers;
    // the FIFO: a ring over two parallel arrays, guarded by this
    private BdevIo[] ios;
    private byte[] ops;
    private int head;
    private int count;
    private int idleWorkers;
    private boolean closed;
    private int highWater;
    private boolean grown;

    FileIoQueue(String name, int workers, int queueDepth, Executor executor) {
        if (workers < 1 || queueDepth < 1) {
            throw new IllegalArgumentException("file bdev " + name + ": workers and queue depth must be positive");
        }
        this.name = name;
        this.executor = executor;
        this.ios = new BdevIo[queueDepth];
        this.ops = new byte[queueDepth];
        this.workers = new Worker[workers];
        for (int i = 0; i < workers; i++) {
            this.workers[i] = new Worker(this, "bdev-" + name + "-" + i);
        }
        for (Worker w : this.workers) {
            w.start();
        }
    }

    /** Appends {@code io} to the FIFO; false when the queue is closed (the caller completes it). */
    boolean submit(BdevIo io, int op) {
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (count == ios.length) {
                grow();
            }
            int tail = (head + count) % ios.length;
            ios[tail] = io;
            ops[tail] = (byte) op;
            count++;
            if (count > highWater) {
                highWater = count;
            }
            if (idleWorkers > 0) {
                notify();
            }
        }
        return true;
    }

    /** Doubles the ring, keeping the order (more requests wait than the preallocated depth). */
    private void grow() {
        int n = ios.length;
        BdevIo[] newIos = new BdevIo[n * 2];
        byte[] newOps = new byte[n * 2];
        for (int i = 0; i < count; i++) {
            newIos[i] = ios[(head + i) % n];
            newOps[i] = ops[(head + i) % n];
        }
        ios = newIos;
        ops = newOps;
        head = 0;
        if (!grown) {
            grown = true;
            LOG.info("file bdev {}: more than {} I/Os wait for its {} workers; the queue grows (now {})", name, n,
                workers.length, n * 2);
        } else {
            LOG.debug("file bdev {}: the queue grows to {}", name, n * 2);
        }
    }

    private void work(Worker self) {
        while (true) {
            BdevIo io;
            int op;
            synchronized (this) {
                while (count == 0) {
                    if (closed) {
                        return;
                    }
                    idleWorkers++;
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        // workers end only through close(), after the FIFO is drained
                    } finally {
                        idleWorkers--;
                    }
                }
                io = ios[head];
                op = ops[head];
                ios[head] = null;
                head = (head + 1) % ios.length;
                count--;
            }
            int status;
            try {
                status = executor.execute(io, op, self);
            } catch (RuntimeException e) {
                LOG.warn("file bdev {}: {}", name, e.toString());
                status = NvmeStatus.INTERNAL_ERROR;
            }
            io.bdevCompleteAsync(status);
        }
    }

    /** Requests waiting for a worker now. */
    synchronized int waiting() {
        return count;
    }

    /** Most requests that have waited at once. */
    synchronized int highWater() {
        return highWater;
    }

    int workers() {
        return workers.length;
    }

    /** Refuses new submissions, lets the workers finish every queued and running I/O, and waits for them. */
    void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        boolean interrupted = false;
        for (Worker w : workers) {
            while (w.isAlive()) {
                try {
                    w.join(CLOSE_LOG_INTERVAL_MS);
                    if (w.isAlive()) {
                        LOG.warn("file bdev {}: still waiting for {} to finish its I/O ({} queued)", name,
                            w.getName(), waiting());
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
