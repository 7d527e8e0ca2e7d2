package io.nvmf4j.service.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.TcpTransportConfig;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.List;

/**
 * The answers that are not config fragments, as records: the routes serialise them and {@link ApiSchemas}
 * generates their schemas from the same types, so an answer and its schema cannot drift apart. Every
 * component is always present in the answer ({@link Nullable} ones may be null).
 */
final class Views {
    private Views() {
    }

    /**
     * An answer class kept outside this file (e.g. {@link ListenerView}): its schema is generated as for the
     * records here (every field present, {@link Nullable} ones may be null).
     */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @interface Answer {
    }

    /** A component that may be null in the answer. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.FIELD, ElementType.RECORD_COMPONENT})
    @interface Nullable {
    }

    /** Every error: {@code {"error": reason, "field": path-or-null}}. */
    record Error(@JsonPropertyDescription("What was wrong, naming the field where there is one") String error,
                 @JsonPropertyDescription("Path of the field of the request at fault (a.b[0].c), or null")
                 @Nullable String field) {
    }

    record Health(@JsonPropertyDescription("UP when ready, DOWN otherwise") String status, boolean live,
                  boolean ready) {
    }

    record Status(@JsonPropertyDescription("UP or DOWN") String status) {
    }

    /** POST /subsystems/{nqn}/hosts. */
    record AllowedHost(@JsonPropertyDescription("The host NQN now allowed") String nqn) {
    }

    /** One ANA group of a subsystem through one listener. */
    record AnaGroup(@JsonPropertyDescription("ANA group id (ANAGRPID)") int group,
                    @JsonPropertyDescription("optimized, non-optimized, inaccessible, persistent-loss or change "
                        + "through this listener") String state,
                    @JsonPropertyDescription("The namespaces in the group") List<Integer> nsids) {
        static AnaGroup of(io.nvmf4j.engine.AnaGroupInfo g) {
            return new AnaGroup(g.group(), g.state(), g.nsids());
        }
    }

    /** One queue of a controller. */
    record Queue(@JsonPropertyDescription("0: admin queue, 1..: I/O queues") int qid,
                 @JsonPropertyDescription("The host's address:port of this queue's connection") @Nullable String address) {
    }

    /** A connected host's controller. */
    record Controller(int cntlid, String hostnqn,
                      @JsonPropertyDescription("Host identifier (Connect's HOSTID) as a UUID") String hostid,
                      @JsonPropertyDescription("The host's address:port of the admin queue") @Nullable String address,
                      @JsonPropertyDescription("Keep-alive timeout, ms (0: none)") int kato, List<Queue> queues) {
    }

    /** A namespace's persistent reservation, read-only (docs/reservations.md). */
    record Reservation(
        @JsonPropertyDescription("Counts registrations, preemptions and clears") int generation,
        @JsonPropertyDescription("Reservation type: 0 none, 1-6 as in the NVMe specification") int rtype,
        @JsonPropertyDescription("rtype by name (none, write-exclusive, ...)") String type,
        @JsonPropertyDescription("Persist Through Power Loss: kept across restarts in the state directory") boolean ptpl,
        @JsonPropertyDescription("Host identifier of the holder, 32 hex digits; null without a reservation")
        @Nullable String holder,
        List<Registrant> registrants) {
        static Reservation of(io.nvmf4j.engine.ReservationInfo r) {
            return new Reservation(r.generation(), r.rtype(), r.type(), r.ptpl(), r.holder(), r.registrants().stream()
                .map(g -> new Registrant(g.hostid(), g.key(), g.holder())).toList());
        }
    }

    /** One registered host of a reservation. */
    record Registrant(
        @JsonPropertyDescription("Host identifier (Connect's HOSTID), 32 hex digits") String hostid,
        @JsonPropertyDescription("Reservation key: an unsigned 64-bit number in decimal") String key,
        @JsonPropertyDescription("Holds the reservation (every registrant does for the All Registrants types)")
        boolean holder) {
    }

    /** The transport options the running target uses. */
    record LiveTransports(TcpTransportConfig tcp, RdmaTransportConfig rdma) {
    }

    /** GET /transports: stored (pending) options at the top, as they were before there was a {@code live}. */
    record Transports(
        @JsonPropertyDescription("Stored TCP options (what the next start uses)") TcpTransportConfig tcp,
        @JsonPropertyDescription("Stored RDMA options (what the next start uses)") RdmaTransportConfig rdma,
        @JsonPropertyDescription("The options the running target uses") LiveTransports live,
        @JsonPropertyDescription("Whether any stored start-up setting differs from the one in effect")
        boolean restartRequired,
        @JsonPropertyDescription("The start-up settings (tcp.*, rdma.*, engine, cores, ...) whose stored value "
            + "differs from the one in effect; they apply at the next start") List<String> restartFields) {
    }

    /** PUT /transports/tcp. */
    record TcpChange(
        @JsonPropertyDescription("Whether any stored start-up setting differs from the one in effect")
        boolean restartRequired,
        @JsonPropertyDescription("The start-up settings that apply only at the next start") List<String> restartFields,
        @JsonPropertyDescription("The stored TCP options") TcpTransportConfig tcp) {
    }

    /** PUT /transports/rdma. */
    record RdmaChange(
        @JsonPropertyDescription("Whether any stored start-up setting differs from the one in effect")
        boolean restartRequired,
        @JsonPropertyDescription("The start-up settings that apply only at the next start") List<String> restartFields,
        @JsonPropertyDescription("The stored RDMA options") RdmaTransportConfig rdma) {
    }

    /** A pool and its file system's capacity now. */
    record Pool(String name,
                @JsonPropertyDescription("reflink-dir or rbd (java engine), lvol (spdk engine)") String kind,
                @JsonPropertyDescription("Its directory (reflink-dir) or RADOS pool (rbd); null for lvol")
                String path,
                @JsonPropertyDescription("Bytes of the pool's file system (reflink-dir), stored plus MAX AVAIL of"
                    + " the RADOS pool (rbd, from the monitors' df), the store's data clusters (lvol)") long size,
                @JsonPropertyDescription("Bytes in use on it (shared reflink blocks counted once; rbd: stored)")
                long used,
                @JsonPropertyDescription("Bytes a writer can still allocate (rbd: MAX AVAIL)") long free,
                @JsonPropertyDescription("The warning watermark, percent of size") int warnPercent,
                @JsonPropertyDescription("Times the use rose above the watermark since the start") long watermarkCrossings,
                @JsonPropertyDescription("Volumes in the pool") int volumes) {
        static Pool of(io.nvmf4j.engine.PoolInfo p) {
            return new Pool(p.name(), p.kind(), p.path(), p.size(), p.used(), p.free(), p.warnPercent(),
                p.watermarkCrossings(), p.volumes());
        }
    }

    /** A volume of a pool. */
    record Volume(String pool, String name,
                  @JsonPropertyDescription("The bdev name a namespace gives it: <pool>/<volume>") String bdev,
                  int blockSize,
                  @JsonPropertyDescription("Its size in bytes") long provisionedBytes,
                  @JsonPropertyDescription("Bytes its file occupies (blocks shared with snapshots and clones counted "
                      + "in each)") long allocatedBytes,
                  @JsonPropertyDescription("Thin (sparse) or thick (allocated at creation)") boolean thin,
                  @JsonPropertyDescription("The snapshot it was cloned from (volume@snapshot), or null")
                  @Nullable String origin,
                  @JsonPropertyDescription("Its snapshots, oldest first") List<String> snapshots,
                  @JsonPropertyDescription("The namespace that uses it (nqn/nsid), or null") @Nullable String namespace,
                  @JsonPropertyDescription("available, or missing: the start found its pool without it (its namespace "
                      + "is not served; delete it, or bring it back and restart)") String state,
                  @JsonPropertyDescription("Why it is missing, or null") @Nullable String cause) {
        static Volume of(io.nvmf4j.engine.VolumeInfo v) {
            return new Volume(v.pool(), v.name(), v.bdev(), v.blockSize(), v.provisionedBytes(), v.allocatedBytes(),
                v.thin(), v.origin(), v.snapshots(), v.namespace(), v.state(), v.cause());
        }
    }

    /** A snapshot of a volume. */
    record Snapshot(String pool, String volume, String name,
                    @JsonPropertyDescription("The volume's size when it was taken, bytes") long sizeBytes,
                    @JsonPropertyDescription("Bytes its file occupies (shared blocks counted in full)")
                    long allocatedBytes,
                    @JsonPropertyDescription("When it was taken (ISO-8601)") String created,
                    @JsonPropertyDescription("Its group snapshot's name, or null") @Nullable String group,
                    @JsonPropertyDescription("Volumes cloned from it (it cannot be deleted while there are any)")
                    List<String> clones) {
        static Snapshot of(io.nvmf4j.engine.SnapshotInfo s) {
            return new Snapshot(s.pool(), s.volume(), s.name(), s.sizeBytes(), s.allocatedBytes(), s.created(),
                s.group(), s.clones());
        }
    }

    /** The snapshots one call took at one instant. */
    record SnapshotsTaken(List<Snapshot> snapshots,
                          @JsonPropertyDescription("How long writes to the volumes' namespaces were held, ns (0: no "
                              + "namespace used them)") long pauseNanos) {
        static SnapshotsTaken of(io.nvmf4j.engine.SnapshotTaken t) {
            return new SnapshotsTaken(t.snapshots().stream().map(Snapshot::of).toList(), t.pauseNanos());
        }
    }
    /** I/O counts of a host or a controller (java engine). */
    record Io(@JsonPropertyDescription("Read commands completed (failed ones included)") long reads,
              @JsonPropertyDescription("Write commands completed (failed ones included)") long writes,
              @JsonPropertyDescription("Other I/O commands (flush, write zeroes, dataset management, ...)") long others,
              @JsonPropertyDescription("Data bytes of successful reads") long bytesRead,
              @JsonPropertyDescription("Data bytes of successful writes") long bytesWritten,
              @JsonPropertyDescription("Commands completed with an error status") long errors,
              @JsonPropertyDescription("Mean read latency in microseconds (0 without reads)") double meanReadMicros,
              @JsonPropertyDescription("Mean write latency in microseconds (0 without writes)") double meanWriteMicros,
              @JsonPropertyDescription("Longest latency of any command, in microseconds") double maxMicros) {
        static Io of(io.nvmf4j.service.metrics.IoTotals t) {
            return new Io(t.reads(), t.writes(), t.others(), t.bytesRead(), t.bytesWritten(), t.errors(),
                mean(t.readLatencyNanos(), t.reads()), mean(t.writeLatencyNanos(), t.writes()),
                t.maxLatencyNanos() / 1e3);
        }

        private static double mean(long nanos, long count) {
            return count == 0 ? 0 : nanos / 1e3 / count;
        }
    }

    /** GET /io/hosts: one host NQN over its controllers. */
    record HostIo(@JsonPropertyDescription("The host NQN") String host,
                  @JsonPropertyDescription("Its live controllers that did I/O") int controllers,
                  @JsonPropertyDescription("Since its first I/O") Io io) {
        static HostIo of(io.nvmf4j.service.metrics.HostTotals h) {
            return new HostIo(h.host(), h.controllers(), Io.of(h.io()));
        }
    }

    /** GET /io/controllers: one live controller. */
    record ControllerIo(@JsonPropertyDescription("The subsystem NQN") String subsystem,
                        @JsonPropertyDescription("The controller ID") int cntlid,
                        @JsonPropertyDescription("Its host NQN") String host,
                        @JsonPropertyDescription("Since its first I/O") Io io) {
        static ControllerIo of(io.nvmf4j.service.metrics.ControllerTotals c) {
            return new ControllerIo(c.subsystem(), c.cntlid(), c.host(), Io.of(c.io()));
        }
    }

    /** GET /io/slowest: one of the slowest recent I/O commands. */
    record SlowIo(@JsonPropertyDescription("When it completed (ISO-8601, UTC)") String time,
                  @JsonPropertyDescription("The subsystem NQN") String subsystem,
                  @JsonPropertyDescription("The nsid it named") int nsid,
                  @JsonPropertyDescription("The host NQN of its controller") String host,
                  @JsonPropertyDescription("Its controller") int cntlid,
                  @JsonPropertyDescription("Its I/O queue") int qid,
                  @JsonPropertyDescription("NVM opcode (2 read, 1 write, 0 flush, 8 write zeroes, ...)") int opcode,
                  @JsonPropertyDescription("read, write or other") String op,
                  @JsonPropertyDescription("Its starting LBA (null for a command without a block range)")
                  @Nullable Long lba,
                  @JsonPropertyDescription("Its number of blocks (null as for lba)") @Nullable Integer blocks,
                  @JsonPropertyDescription("Data bytes it moved (0 when it failed)") int bytes,
                  @JsonPropertyDescription("Capsule arrival to response sent, in microseconds") double latencyMicros,
                  @JsonPropertyDescription("NVMe status: <sct>/0x<sc>, 0/0x00 for success") String status) {
        static SlowIo of(io.nvmf4j.service.metrics.SlowIo s) {
            String op = s.opcode() == io.nvmf4j.nvme.Opcodes.IO_READ ? "read"
                : s.opcode() == io.nvmf4j.nvme.Opcodes.IO_WRITE ? "write" : "other";
            return new SlowIo(java.time.Instant.ofEpochMilli(s.timeMillis()).toString(), s.subsystem(), s.nsid(),
                s.host(), s.cntlid(), s.qid(), s.opcode(), op, s.lba(), s.blocks(), s.bytes(), s.latencyNanos() / 1e3,
                s.statusText());
        }
    }

    /** GET /subsystems/{nqn}/namespaces/{nsid}/latency: percentiles of one op, in microseconds. */
    record Latency(@JsonPropertyDescription("read or write; all on the spdk engine (every command together)") String op,
                   @JsonPropertyDescription("Commands the percentiles are over (since the service started; spdk "
                       + "engine: since the namespace was added)") long count,
                   double p50Micros, double p90Micros, double p99Micros,
                   @JsonPropertyDescription("p99.9") double p999Micros,
                   @JsonPropertyDescription("The longest of the last minutes (0 when none came lately); spdk engine: "
                       + "the upper bound of the slowest bucket since the namespace was added") double maxMicros) {
        static Latency of(io.nvmf4j.service.metrics.LatencyPercentiles p) {
            return new Latency(p.op(), p.count(), p.p50Micros(), p.p90Micros(), p.p99Micros(), p.p999Micros(),
                p.maxMicros());
        }
    }
}
