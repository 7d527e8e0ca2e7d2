package io.nvmf4j.testhost;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * NVMe and Fabrics commands on one queue ({@link TcpHost}): builds the SQE, submits it and waits
 * for the completion. Every synchronous call fails with {@link IllegalStateException} if the
 * command does not complete within the queue's timeout; an error status is returned, not thrown.
 */
public final class NvmeHost {
    public static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    // Admin opcodes
    public static final int OPC_GET_LOG_PAGE = 0x02;
    public static final int OPC_IDENTIFY = 0x06;
    public static final int OPC_ABORT = 0x08;
    public static final int OPC_SET_FEATURES = 0x09;
    public static final int OPC_GET_FEATURES = 0x0A;
    public static final int OPC_ASYNC_EVENT_REQUEST = 0x0C;
    public static final int OPC_KEEP_ALIVE = 0x18;
    // NVM command set opcodes
    public static final int OPC_FLUSH = 0x00;
    public static final int OPC_WRITE = 0x01;
    public static final int OPC_READ = 0x02;
    public static final int OPC_COMPARE = 0x05;
    public static final int OPC_WRITE_ZEROES = 0x08;
    public static final int OPC_DSM = 0x09;
    public static final int OPC_RESV_REGISTER = 0x0D;
    public static final int OPC_RESV_REPORT = 0x0E;
    public static final int OPC_RESV_ACQUIRE = 0x11;
    public static final int OPC_RESV_RELEASE = 0x15;
    // Fabrics command types
    public static final int FCTYPE_PROPERTY_SET = 0x00;
    public static final int FCTYPE_CONNECT = 0x01;
    public static final int FCTYPE_PROPERTY_GET = 0x04;
    // Controller properties
    public static final int PROP_CAP = 0x00;
    public static final int PROP_VS = 0x08;
    public static final int PROP_CC = 0x14;
    public static final int PROP_CSTS = 0x1C;

    public static final int CONNECT_DATA_SIZE = 1024;

    /** Connect response: the controller ID is dw0 bits 15:0. */
    public record ConnectResult(Completion completion) {
        public int cntlid() {
            return completion.dw0() & 0xFFFF;
        }

        public boolean ok() {
            return completion.ok();
        }
    }

    /** One DSM range: starting LBA and number of logical blocks (1-based). */
    public record Range(long slba, int nlb) {
    }

    private final TcpHost queue;
    private final int blockSize;

    public NvmeHost(TcpHost queue, int blockSize) {
        this.queue = queue;
        this.blockSize = blockSize;
    }

    public TcpHost queue() {
        return queue;
    }

    public int blockSize() {
        return blockSize;
    }

    // ---- generic ----

    public Completion execute(Sqe sqe) {
        return await(queue.submit(sqe, null, 0));
    }

    public Completion executeWrite(Sqe sqe, byte[] data) {
        return await(queue.submit(sqe, data, 0));
    }

    public Completion executeRead(Sqe sqe, int length) {
        return await(queue.submit(sqe, null, length));
    }

    public Completion await(CompletableFuture<Completion> future) {
        try {
            return future.get(queue.options().timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("command did not complete: " + e, e);
        }
    }

    // ---- Fabrics ----

    /** Connect SQE: RECFMT u16 at 40 (0), QID u16 at 42, SQSIZE u16 at 44, CATTR u8 at 46, KATO u32 at 48. */
    public static Sqe connectCommand(int qid, int sqsize, int cattr, int katoMs) {
        return Sqe.fabrics(FCTYPE_CONNECT).u16(42, qid).u16(44, sqsize).u8(46, cattr).u32(48, katoMs);
    }

    /** Connect data: HOSTID 16 B at 0, CNTLID u16 at 16, SUBNQN at 256, HOSTNQN at 512 (256 B each, UTF-8). */
    public static byte[] connectData(byte[] hostid, int cntlid, String subnqn, String hostnqn) {
        ByteBuffer b = ByteBuffer.allocate(CONNECT_DATA_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, hostid).putShort(16, (short) cntlid);
        b.put(256, subnqn.getBytes(StandardCharsets.UTF_8));
        b.put(512, hostnqn.getBytes(StandardCharsets.UTF_8));
        return b.array();
    }

    public ConnectResult fabricsConnect(int qid, int sqsize, int cntlid, int katoMs, String hostnqn, String subnqn,
                                        byte[] hostid) {
        Sqe sqe = connectCommand(qid, sqsize, 0, katoMs);
        return new ConnectResult(executeWrite(sqe, connectData(hostid, cntlid, subnqn, hostnqn)));
    }

    /** Property Get: ATTRIB at 40 (1 = 8 bytes), OFFSET u32 at 44; the value is dw1:dw0. */
    public Completion propertyGet(int offset, boolean eightBytes) {
        return execute(Sqe.fabrics(FCTYPE_PROPERTY_GET).u8(40, eightBytes ? 1 : 0).u32(44, offset));
    }

    /** Property Set: ATTRIB at 40, OFFSET u32 at 44, VALUE u64 at 48. */
    public Completion propertySet(int offset, long value, boolean eightBytes) {
        return execute(Sqe.fabrics(FCTYPE_PROPERTY_SET).u8(40, eightBytes ? 1 : 0).u32(44, offset).u64(48, value));
    }

    /** Writes CC (EN=1, IOSQES=6, IOCQES=4) and polls CSTS until RDY=1. */
    public void enableController() {
        Completion set = propertySet(PROP_CC, 1 | (6 << 16) | (4 << 20), false);
        if (!set.ok()) {
            throw new IllegalStateException("Property Set CC failed: " + set);
        }
        long deadline = System.nanoTime() + queue.options().timeout().toNanos();
        while (System.nanoTime() < deadline) {
            Completion csts = propertyGet(PROP_CSTS, false);
            if (csts.ok() && (csts.dw0() & 1) == 1) {
                return;
            }
            sleep(10);
        }
        throw new IllegalStateException("CSTS.RDY did not become 1");
    }

    // ---- Admin ----

    /** Identify: CNS in cdw10 bits 7:0, CNTID in bits 31:16; 4096 bytes back. */
    public Completion identify(int cns, int nsid, int cntid) {
        return executeRead(Sqe.of(OPC_IDENTIFY).nsid(nsid).cdw(10, (cns & 0xFF) | (cntid << 16)), 4096);
    }

    /** Get Log Page: LID cdw10 7:0, NUMDL cdw10 31:16, NUMDU cdw11 15:0 (0-based dwords), LPOL/LPOU cdw12/13. */
    public Completion getLogPage(int lid, int nsid, long offset, int length) {
        int numd = length / 4 - 1;
        Sqe sqe = Sqe.of(OPC_GET_LOG_PAGE).nsid(nsid)
                .cdw(10, (lid & 0xFF) | ((numd & 0xFFFF) << 16))
                .cdw(11, numd >>> 16)
                .cdw(12, (int) offset)
                .cdw(13, (int) (offset >>> 32));
        return executeRead(sqe, length);
    }

    public Completion setFeatures(int fid, int cdw11) {
        return execute(Sqe.of(OPC_SET_FEATURES).cdw(10, fid).cdw(11, cdw11));
    }

    public Completion setFeatures(int fid, int cdw11, byte[] data) {
        return executeWrite(Sqe.of(OPC_SET_FEATURES).cdw(10, fid).cdw(11, cdw11), data);
    }

    /** Get Features with SEL 0 (current). */
    public Completion getFeatures(int fid, int cdw11) {
        return execute(Sqe.of(OPC_GET_FEATURES).cdw(10, fid).cdw(11, cdw11));
    }

    public Completion getFeatures(int fid, int cdw11, int dataLength) {
        return executeRead(Sqe.of(OPC_GET_FEATURES).cdw(10, fid).cdw(11, cdw11), dataLength);
    }

    public Completion keepAlive() {
        return execute(Sqe.of(OPC_KEEP_ALIVE));
    }

    /** Abort: SQID in cdw10 bits 15:0, CID in bits 31:16. */
    public Completion abort(int sqid, int cid) {
        return execute(Sqe.of(OPC_ABORT).cdw(10, (sqid & 0xFFFF) | (cid << 16)));
    }

    /** Not awaited: the controller holds it until an event. */
    public CompletableFuture<Completion> asyncEventRequest() {
        return queue.submit(Sqe.of(OPC_ASYNC_EVENT_REQUEST), null, 0);
    }

    // ---- NVM I/O ----

    /** Read/Write/Compare/Write Zeroes SQE: SLBA in cdw10/11, NLB (0-based) in cdw12 bits 15:0. */
    public static Sqe rw(int opcode, int nsid, long slba, int nlb) {
        return Sqe.of(opcode).nsid(nsid).cdw(10, (int) slba).cdw(11, (int) (slba >>> 32)).cdw(12, (nlb - 1) & 0xFFFF);
    }

    public Completion read(int nsid, long slba, int nlb) {
        return await(readAsync(nsid, slba, nlb));
    }

    public CompletableFuture<Completion> readAsync(int nsid, long slba, int nlb) {
        return queue.submit(rw(OPC_READ, nsid, slba, nlb), null, nlb * blockSize);
    }

    public Completion write(int nsid, long slba, byte[] data) {
        return await(writeAsync(nsid, slba, data));
    }

    public CompletableFuture<Completion> writeAsync(int nsid, long slba, byte[] data) {
        return queue.submit(rw(OPC_WRITE, nsid, slba, data.length / blockSize), data, 0);
    }

    public Completion compare(int nsid, long slba, byte[] data) {
        return executeWrite(rw(OPC_COMPARE, nsid, slba, data.length / blockSize), data);
    }

    public Completion flush(int nsid) {
        return execute(Sqe.of(OPC_FLUSH).nsid(nsid));
    }

    public Completion writeZeroes(int nsid, long slba, int nlb) {
        return execute(rw(OPC_WRITE_ZEROES, nsid, slba, nlb));
    }

    /** Dataset Management with AD (cdw11 bit 2); NR 0-based in cdw10; ranges of 16 B (attrs, nlb, slba). */
    public Completion deallocate(int nsid, Range... ranges) {
        return await(deallocateAsync(nsid, 16 * ranges.length, ranges));
    }

    /**
     * Dataset Management with AD whose data is {@code payloadBytes} long: the ranges, then zeros (Linux hosts
     * send a whole 4 KiB page whatever NR is). A payload shorter than the ranges is cut short.
     */
    public CompletableFuture<Completion> deallocateAsync(int nsid, int payloadBytes, Range... ranges) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(payloadBytes, 16 * ranges.length)).order(ByteOrder.LITTLE_ENDIAN);
        for (Range r : ranges) {
            b.putInt(0).putInt(r.nlb()).putLong(r.slba());
        }
        byte[] data = java.util.Arrays.copyOf(b.array(), payloadBytes);
        return queue.submit(Sqe.of(OPC_DSM).nsid(nsid).cdw(10, ranges.length - 1).cdw(11, 1 << 2), data, 0);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    // ---- reservations ----

    /** Reservation Register: cdw10 RREGA 2:0, IEKEY 3, CPTPL 31:30; data CRKEY, NRKEY. */
    public Completion resvRegister(int nsid, int action, boolean iekey, int cptpl, long crkey, long nrkey) {
        return resvRegisterRaw(nsid, action | (iekey ? 1 << 3 : 0) | (cptpl << 30), crkey, nrkey);
    }

    public Completion resvRegisterRaw(int nsid, int cdw10, long crkey, long nrkey) {
        byte[] d = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(crkey).putLong(nrkey).array();
        return executeWrite(Sqe.of(OPC_RESV_REGISTER).nsid(nsid).cdw(10, cdw10), d);
    }

    /** Reservation Acquire: cdw10 RACQA 2:0, RTYPE 15:8; data CRKEY, PRKEY. */
    public Completion resvAcquire(int nsid, int action, int rtype, long crkey, long prkey) {
        return resvAcquireRaw(nsid, action | (rtype << 8), crkey, prkey);
    }

    public Completion resvAcquireRaw(int nsid, int cdw10, long crkey, long prkey) {
        return await(resvAcquireAsync(nsid, cdw10, crkey, prkey));
    }

    public CompletableFuture<Completion> resvAcquireAsync(int nsid, int cdw10, long crkey, long prkey) {
        byte[] d = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(crkey).putLong(prkey).array();
        return queue.submit(Sqe.of(OPC_RESV_ACQUIRE).nsid(nsid).cdw(10, cdw10), d, 0);
    }

    /** Reservation Release: cdw10 RRELA 2:0, RTYPE 15:8; data CRKEY. */
    public Completion resvRelease(int nsid, int action, int rtype, long crkey) {
        return resvReleaseRaw(nsid, action | (rtype << 8), crkey);
    }

    public Completion resvReleaseRaw(int nsid, int cdw10, long crkey) {
        byte[] d = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(crkey).array();
        return executeWrite(Sqe.of(OPC_RESV_RELEASE).nsid(nsid).cdw(10, cdw10), d);
    }

    /** Reservation Report of {@code length} bytes: NUMD (0's based) in cdw10, EDS in cdw11 bit 0. */
    public Completion resvReport(int nsid, boolean eds, int length) {
        return executeRead(Sqe.of(OPC_RESV_REPORT).nsid(nsid).cdw(10, length / 4 - 1).cdw(11, eds ? 1 : 0), length);
    }
}
