package io.nvmf4j.bdev;

import io.netty.buffer.ByteBuf;
import io.nvmf4j.nvme.NvmeStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A regular file or a block device, read and written with positional I/O on a small worker pool
 * (the poll groups never block on the disk). Flush is {@code fdatasync}. With {@code directIo} the
 * file is opened with O_DIRECT and data moves through block-aligned bounce buffers.
 *
 * <p>Deallocate writes zeros (Java has no portable hole punching; a native {@code fallocate} comes with
 * the rdma-cm JNI library). A regular file that is shorter than {@code numBlocks} is extended (sparse).
 *
 * <p>Each operation is one task on the worker pool (an allocation per I/O, dwarfed by the system call).
 */
public final class FileBdev extends AbstractBdev {
    private static final Logger LOG = LoggerFactory.getLogger(FileBdev.class);
    private static final int ZERO_CHUNK = 1 << 20;

    private final Path path;
    private final boolean directIo;
    private final FileChannel channel;
    private final ThreadPoolExecutor workers;
    private final ThreadLocal<ByteBuffer> bounce;

    private FileBdev(String name, Path path, int blockSize, long numBlocks, boolean directIo, FileChannel channel,
                     int threads) {
        super(name, blockSize, numBlocks);
        this.path = path;
        this.directIo = directIo;
        this.channel = channel;
        this.workers = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new ArrayBlockingQueue<>(4096),
            r -> {
                Thread t = new Thread(r, "bdev-" + name);
                t.setDaemon(true);
                return t;
            }, new ThreadPoolExecutor.AbortPolicy());
        this.bounce = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect((2 << 20) + 4096).alignedSlice(4096));
    }

    /**
     * Opens (creating a regular file if absent) the file at {@code path}. {@code numBlocks == 0} takes the
     * current size; a regular file shorter than {@code numBlocks} blocks is extended.
     */
    public static FileBdev open(String name, Path path, int blockSize, long numBlocks, boolean directIo) {
        boolean blockDevice = isBlockDevice(path);
        if (directIo) {
            checkDirectIoAlignment(name, path, blockSize);
        }
        List<OpenOption> opts = new ArrayList<>(List.of(StandardOpenOption.READ, StandardOpenOption.WRITE));
        if (!blockDevice) {
            opts.add(StandardOpenOption.CREATE);
        }
        if (directIo) {
            opts.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
        }
        FileChannel ch;
        try {
            if (!blockDevice && path.getParent() != null) {
                Files.createDirectories(path.getParent());
            }
            ch = FileChannel.open(path, opts.toArray(new OpenOption[0]));
        } catch (IOException | UnsupportedOperationException e) {
            throw new BdevException("file bdev " + name + ": cannot open " + path + ": " + e, e);
        }
        try {
            long size = blockDevice ? blockDeviceSize(path) : ch.size();
            long blocks = numBlocks;
            if (blocks == 0) {
                blocks = size / blockSize;
            } else if (size < blocks * blockSize) {
                if (blockDevice) {
                    throw new BdevException("file bdev " + name + ": " + path + " holds " + size
                        + " bytes, fewer than numBlocks " + numBlocks + " x " + blockSize);
                }
                extend(path, blocks * blockSize);
            }
            if (blocks <= 0) {
                throw new BdevException("file bdev " + name + ": " + path
                    + " is empty; give numBlocks to create it with a size");
            }
            return new FileBdev(name, path, blockSize, blocks, directIo, ch, 2);
        } catch (IOException | RuntimeException e) {
            closeQuietly(ch);
            if (e instanceof BdevException b) {
                throw b;
            }
            throw new BdevException("file bdev " + name + ": " + path + ": " + e, e);
        }
    }

    /** Grows a regular file (sparse) through a separate descriptor, which also works when ours is O_DIRECT. */
    private static void extend(Path path, long size) throws IOException {
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
            raf.setLength(size);
        }
    }

    /**
     * O_DIRECT needs every offset and length aligned to the filesystem's block size; a namespace block
     * smaller than that would fail unaligned I/O, so refuse it up front.
     */
    private static void checkDirectIoAlignment(String name, Path path, int blockSize) {
        Path existing = Files.exists(path) ? path : path.toAbsolutePath().getParent();
        long fsBlock;
        try {
            fsBlock = existing == null ? 4096 : Files.getFileStore(existing).getBlockSize();
        } catch (IOException | UnsupportedOperationException e) {
            fsBlock = 4096;
        }
        if (blockSize < fsBlock) {
            throw new BdevException("file bdev " + name + ": directIo needs blockSize >= the filesystem block size ("
                + fsBlock + " bytes at " + existing + "), got " + blockSize);
        }
    }

    private static boolean isBlockDevice(Path path) {
        try {
            return Files.exists(path) && !Files.isRegularFile(path) && !Files.isDirectory(path);
        } catch (SecurityException e) {
            return false;
        }
    }

    private static long blockDeviceSize(Path path) throws IOException {
        Path real = path.toRealPath();
        Path sys = Path.of("/sys/class/block", real.getFileName().toString(), "size");
        return Long.parseLong(Files.readString(sys).trim()) * 512;
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing more to do
        }
    }

    @Override
    public boolean persistent() {
        return true;
    }

    public Path path() {
        return path;
    }

    @Override
    public void read(BdevIo io) {
        submit(io, () -> doRead(io));
    }

    @Override
    public void write(BdevIo io) {
        submit(io, () -> doWrite(io.buffer(), io.offset(), io.length()));
    }

    @Override
    public void flush(BdevIo io) {
        submit(io, this::doFlush);
    }

    @Override
    public void writeZeroes(BdevIo io) {
        submit(io, () -> doZero(io.offset(), io.length()));
    }

    /**
     * Runs {@code op} on a worker; every submission ends in exactly one completion, also when the device
     * is closed (refused: INTERNAL_ERROR on the caller's thread) or the operation throws.
     */
    private void submit(BdevIo io, java.util.function.IntSupplier op) {
        if (io.offset() < 0 || io.length() < 0 || io.offset() + io.length() > numBlocks() * blockSize()) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
            return;
        }
        try {
            workers.execute(() -> {
                int status;
                try {
                    status = op.getAsInt();
                } catch (RuntimeException e) {
                    LOG.warn("file bdev {}: {}", name(), e.toString());
                    status = NvmeStatus.INTERNAL_ERROR;
                }
                io.bdevCompleteAsync(status);
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            io.bdevComplete(NvmeStatus.INTERNAL_ERROR);
        }
    }

    @Override
    public void deallocate(BdevIo io) {
        writeZeroes(io);
    }

    private int doRead(BdevIo io) {
        ByteBuf dst = io.buffer();
        long off = io.offset();
        int len = io.length();
        try {
            if (directIo) {
                ByteBuffer b = bounce.get();
                int done = 0;
                while (done < len) {
                    int n = Math.min(len - done, b.capacity());
                    b.clear().limit(n);
                    readFully(b, off + done);
                    b.flip();
                    dst.setBytes(done, b);
                    done += n;
                }
            } else {
                readFully(dst.nioBuffer(0, len), off);
            }
            return NvmeStatus.SUCCESS;
        } catch (IOException e) {
            LOG.warn("file bdev {}: read of {} bytes at {} failed: {}", name(), len, off, e.toString());
            return NvmeStatus.UNRECOVERED_READ_ERROR;
        }
    }

    private void readFully(ByteBuffer b, long position) throws IOException {
        long pos = position;
        while (b.hasRemaining()) {
            int n = channel.read(b, pos);
            if (n < 0) {
                // past the end of a file that shrank underneath us: zeros
                while (b.hasRemaining()) {
                    b.put((byte) 0);
                }
                return;
            }
            pos += n;
        }
    }

    private int doWrite(ByteBuf src, long off, int len) {
        try {
            if (directIo) {
                ByteBuffer b = bounce.get();
                int done = 0;
                while (done < len) {
                    int n = Math.min(len - done, b.capacity());
                    b.clear().limit(n);
                    src.getBytes(done, b);
                    b.flip();
                    writeFully(b, off + done);
                    done += n;
                }
            } else {
                writeFully(src.nioBuffer(0, len), off);
            }
            return NvmeStatus.SUCCESS;
        } catch (IOException e) {
            LOG.warn("file bdev {}: write of {} bytes at {} failed: {}", name(), len, off, e.toString());
            return NvmeStatus.WRITE_FAULT;
        }
    }

    private void writeFully(ByteBuffer b, long position) throws IOException {
        long pos = position;
        while (b.hasRemaining()) {
            pos += channel.write(b, pos);
        }
    }

    private int doFlush() {
        try {
            channel.force(false);
            return NvmeStatus.SUCCESS;
        } catch (IOException e) {
            LOG.warn("file bdev {}: fdatasync failed: {}", name(), e.toString());
            return NvmeStatus.WRITE_FAULT;
        }
    }

    private int doZero(long off, long len) {
        try {
            ByteBuffer zeros = bounce.get();
            long done = 0;
            while (done < len) {
                int n = (int) Math.min(len - done, Math.min(ZERO_CHUNK, zeros.capacity()));
                zeros.clear().limit(n);
                for (int i = 0; i < n; i += 8) {
                    zeros.putLong(i, 0L);
                }
                writeFully(zeros, off + done);
                done += n;
            }
            return NvmeStatus.SUCCESS;
        } catch (IOException e) {
            LOG.warn("file bdev {}: zeroing {} bytes at {} failed: {}", name(), len, off, e.toString());
            return NvmeStatus.WRITE_FAULT;
        }
    }

    @Override
    public synchronized void grow(long newNumBlocks) {
        long bytes = newNumBlocks * blockSize();
        try {
            if (Files.isRegularFile(path)) {
                if (Files.size(path) < bytes) {
                    extend(path, bytes);
                }
            } else if (blockDeviceSize(path) < bytes) {
                throw new BdevException("file bdev " + name() + ": block device " + path + " is smaller than "
                    + bytes + " bytes");
            }
        } catch (IOException e) {
            throw new BdevException("file bdev " + name() + ": cannot grow " + path + ": " + e, e);
        }
        setNumBlocks(newNumBlocks);
    }

    @Override
    public void close() {
        workers.shutdown();
        try {
            if (!workers.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("file bdev {}: workers did not finish within 10 s", name());
            }
            channel.force(true);
        } catch (IOException e) {
            LOG.warn("file bdev {}: final sync failed: {}", name(), e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closeQuietly(channel);
        }
    }
}
