package io.nvmf4j.it;

import io.nvmf4j.auth.DhGroup;
import io.nvmf4j.auth.DhchapKey;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.DhchapHost;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static io.nvmf4j.it.TestTarget.ADDRESS;
import static io.nvmf4j.it.TestTarget.ALLOWED_HOSTNQN;
import static io.nvmf4j.it.TestTarget.KATO_MS;
import static io.nvmf4j.it.TestTarget.RESTRICTED_NQN;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DH-HMAC-CHAP over loopback NVMe/TCP: the test host ({@link DhchapHost}, written from the specification apart from
 * the target's code) authenticates the admin and I/O queues of {@link TestTarget#RESTRICTED_NQN} uni- and
 * bidirectionally with each hash and the null, ffdhe2048 and ffdhe4096 groups; commands before authentication, wrong
 * and missing keys, key rotation and re-authentication, and malformed or out-of-order messages each end that host's
 * authentication with the status or Failure1 reason nvmet gives, while another host's I/O carries on.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AuthTest {
    static final String HOST = ALLOWED_HOSTNQN;
    static final int[] ALL_HASHES = {1, 2, 3};
    static final int[] NULL_GROUP = {0};
    static final int[] FFDHE2048 = {1};
    static final int SC_AUTH_REQUIRED = 0x91;
    static final int SC_INVALID_FIELD = 0x02;

    @TempDir
    Path dir;

    private TestTarget t;
    private final CountingObserver observer = new CountingObserver();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final AtomicInteger tids = new AtomicInteger(0x100);
    private byte[] hostSecret = Le.random(32, 1);
    private byte[] ctrlSecret = Le.random(48, 2);
    private Path hostKeyFile;
    private Path ctrlKeyFile;

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        if (t != null) {
            t.close();
        }
    }

    private void start(int keyHash, boolean ctrlKey) throws IOException {
        start(keyHash, ctrlKey, c -> { });
    }

    /** As {@link #start(int, boolean)}, with {@code more} done to the config (the host's entry is the last one). */
    private void start(int keyHash, boolean ctrlKey, Consumer<TargetConfig> more) throws IOException {
        hostKeyFile = writeKey("host.key", keyHash, hostSecret);
        ctrlKeyFile = ctrlKey ? writeKey("ctrl.key", (keyHash + 1) % 4, ctrlSecret) : null;
        start(c -> {
            restricted(c).hostKeys.add(new HostKeyConfig(HOST, hostKeyFile.toString(),
                ctrlKeyFile == null ? null : ctrlKeyFile.toString()));
            more.accept(c);
        });
    }

    private static HostKeyConfig hostKey(TargetConfig c) {
        List<HostKeyConfig> keys = restricted(c).hostKeys;
        return keys.get(keys.size() - 1);
    }

    private void start(Consumer<TargetConfig> customizer) throws IOException {
        t = TestTarget.start(customizer, observer);
    }

    static SubsystemConfig restricted(TargetConfig c) {
        return c.subsystems.stream().filter(s -> s.nqn.equals(RESTRICTED_NQN)).findFirst().orElseThrow();
    }

    private Path writeKey(String name, int hash, byte[] secret) throws IOException {
        Path f = dir.resolve(name);
        Files.deleteIfExists(f);
        Files.createFile(f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(f, DhchapKey.format(hash, secret) + "\n");
        return f;
    }

    private int keyHash(Path f) throws IOException {
        return DhchapKey.parse(Files.readString(f)).hashId();
    }

    /** The test host with the key in the target's files (or {@code secret} instead of the host key). */
    private DhchapHost host(byte[] secret) throws IOException {
        return new DhchapHost(HOST, RESTRICTED_NQN, keyHash(hostKeyFile), secret,
            ctrlKeyFile == null ? 0 : keyHash(ctrlKeyFile), ctrlKeyFile == null ? null : ctrlSecret,
            id -> DhGroup.byId(id).prime());
    }

    private NvmeController authenticated(DhchapHost h, int[] hashes, int[] groups, boolean bidirectional,
                                         int ioQueues) throws IOException {
        NvmeController c = NvmeController.open(ADDRESS, t.port, RESTRICTED_NQN, HOST, KATO_MS, ioQueues,
            TcpHostOptions.DEFAULT, (q, qid) -> {
                DhchapHost.Result r = h.authenticate(q, tids.incrementAndGet(), hashes, groups, bidirectional);
                if (!r.success()) {
                    throw new IllegalStateException("qid " + qid + ": " + r);
                }
            });
        open.add(c);
        return c;
    }

    /** An admin queue connected (the target asked for authentication) and nothing else done. */
    private NvmeHost connectedAdmin() throws IOException {
        return connectedAdmin(KATO_MS);
    }

    private NvmeHost connectedAdmin(int katoMs) throws IOException {
        NvmeHost admin = new NvmeHost(TcpHost.connect(ADDRESS, t.port, TcpHostOptions.DEFAULT), 512);
        open.add(admin.queue());
        NvmeHost.ConnectResult r = admin.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, katoMs, HOST,
            RESTRICTED_NQN, NvmeController.hostIdFor(HOST));
        assertThat(r.ok()).as("Connect: %s", r.completion()).isTrue();
        assertThat(r.completion().dw0() & (1 << 17)).as("AUTHREQ.ATR in the Connect response").isNotZero();
        admin.enableController(); // Property Get and Set are Fabrics commands: they run before authentication
        return admin;
    }

    /** Another host on the open subsystem, doing I/O while this one fails. */
    private NvmeController bystander() throws IOException {
        NvmeController c = t.controller(1, TcpHostOptions.DEFAULT);
        open.add(c);
        TestTarget.assertWriteReadBack(c.io(0), 0, 4096, 11);
        return c;
    }

    private static void assertFailsTheQueue(NvmeHost q) throws InterruptedException {
        assertThat(q.queue().awaitClosed(Duration.ofSeconds(5))).as("the failed host's connection is closed").isTrue();
    }

    /** The failed host's connection closes, one failure is counted, and the bystander's I/O goes on. */
    private void assertOnlyThisHostFailed(NvmeHost q, NvmeController bystander, long slba) throws InterruptedException {
        assertFailsTheQueue(q);
        assertThat(observer.authFailures()).as("failures counted").isEqualTo(1);
        TestTarget.assertWriteReadBack(bystander.io(0), slba, 4096, slba);
    }

    /** An Authentication Receive's Failure1 with RESCODE 01h and {@code reason}. */
    private static void assertFailure1(Completion f, int reason) {
        assertThat(f.ok()).as("%s", f).isTrue();
        assertThat(f.data()[1] & 0xFF).as("Failure1").isEqualTo(0xF1);
        assertThat(f.data()[6]).as("RESCODE").isEqualTo((byte) 1);
        assertThat(f.data()[7]).as("RESCODE_EXP").isEqualTo((byte) reason);
    }

    // ---- success ----

    @ParameterizedTest(name = "hash {0}, DH group {1}, bidirectional {2}")
    @CsvSource({"1,0,false", "2,0,false", "3,0,false", "1,1,false", "2,1,false", "3,1,false", "1,3,false",
        "2,3,false", "3,3,false", "1,0,true", "2,0,true", "3,0,true", "1,1,true", "2,1,true", "3,1,true",
        "1,3,true", "2,3,true", "3,3,true"})
    void authenticatesEveryQueueAndThenServesIo(int hash, int group, boolean bidirectional) throws Exception {
        // bidirectional without DH only where the host's entry names the null group (the default refuses it)
        start((hash + group) % 4, bidirectional, c -> hostKey(c).dhchapDhGroups = group == 0 && bidirectional
            ? List.of("null") : null);
        NvmeController c = authenticated(host(hostSecret), new int[]{hash}, new int[]{group}, bidirectional, 1);
        assertThat(c.admin().identify(1, 0, 0).ok()).isTrue();
        TestTarget.assertWriteReadBack(c.io(0), 8, 4096, hash * 10 + group);
        assertThat(observer.authFailures()).isZero();
    }

    @Test
    void theTargetTakesTheHostsFirstHashAndPrefersARealGroupToNull() throws Exception {
        start(0, false);
        NvmeHost admin = connectedAdmin();
        DhchapHost.Exchange x = host(hostSecret).start(admin, 7, new int[]{9, 2, 1}, new int[]{0, 3, 1});
        ByteBuffer m = ByteBuffer.wrap(x.challenge).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(m.get(1)).as("Challenge").isEqualTo((byte) 1);
        assertThat(m.getShort(4)).as("T_ID").isEqualTo((short) 7);
        assertThat(m.get(8)).as("HASHID: the first known one the host offered").isEqualTo((byte) 2);
        assertThat(m.get(9)).as("DHGID: ffdhe4096, the host's first non-null group").isEqualTo((byte) 3);
        assertThat(m.get(6)).as("HL").isEqualTo((byte) 48);
        assertThat(m.getShort(10)).as("DHVLEN").isEqualTo((short) 512);
        assertThat(m.getInt(12)).as("SEQNUM").isNotZero();
    }

    // ---- before authentication ----

    @Test
    void beforeAuthenticationOnlyFabricsCommandsRun() throws Exception {
        start(1, false);
        NvmeHost admin = connectedAdmin();
        assertThat(admin.propertyGet(NvmeHost.PROP_CAP, true).ok()).as("Property Get").isTrue();
        assertStatus(admin.identify(1, 0, 0), 1, SC_AUTH_REQUIRED, true);
        assertStatus(admin.keepAlive(), 1, SC_AUTH_REQUIRED, true);
        DhchapHost.Result r = host(hostSecret).authenticate(admin, 3, ALL_HASHES, FFDHE2048, false);
        assertThat(r.success()).as("%s", r).isTrue();
        assertThat(admin.identify(1, 0, 0).ok()).as("Identify after authentication").isTrue();
    }

    // ---- failures ----

    @Test
    void aWrongKeyGetsFailure1AndEndsOnlyThatHost() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        DhchapHost.Result r = host(Le.random(32, 99)).authenticate(admin, 5, ALL_HASHES, FFDHE2048, false);
        assertThat(r.success()).isFalse();
        assertThat(r.failureReason()).as("RESCODE_EXP: authentication failed").isEqualTo(1);
        assertThat(observer.authFailures("failed")).isEqualTo(1);
        assertOnlyThisHostFailed(admin, other, 16);
    }

    /**
     * A second connection that knows an authenticated host's NQN, host ID and cntlid connects an I/O queue to that
     * controller and fails its authentication: only that queue ends. The host's controller stays live (its admin
     * queue answers, its connection stays open) and connects and uses its own I/O queue afterwards.
     */
    @Test
    void aFailedAuthenticationOnAnIoQueueEndsOnlyThatQueue() throws Exception {
        start(1, false);
        NvmeController c = authenticated(host(hostSecret), ALL_HASHES, FFDHE2048, false, 0);
        NvmeHost intruder = new NvmeHost(TcpHost.connect(ADDRESS, t.port, TcpHostOptions.DEFAULT), 512);
        open.add(intruder.queue());
        NvmeHost.ConnectResult r = intruder.fabricsConnect(1, NvmeController.IO_SQSIZE, c.cntlid(), 0, HOST,
            RESTRICTED_NQN, NvmeController.hostIdFor(HOST));
        assertThat(r.ok()).as("the intruder's I/O queue Connect: %s", r.completion()).isTrue();
        assertThat(r.completion().dw0() & (1 << 17)).as("AUTHREQ.ATR").isNotZero();
        DhchapHost.Result bad = host(Le.random(32, 99)).authenticate(intruder, 9, ALL_HASHES, FFDHE2048, false);
        assertThat(bad.success()).isFalse();
        assertThat(bad.failureReason()).as("RESCODE_EXP: authentication failed").isEqualTo(1);
        assertFailsTheQueue(intruder);
        assertThat(observer.authFailures("failed")).isEqualTo(1);

        assertThat(c.admin().keepAlive().ok()).as("the host's controller answers on its admin queue").isTrue();
        assertThat(c.admin().queue().isClosed()).as("the host's admin connection").isFalse();
        NvmeHost io = new NvmeHost(TcpHost.connect(ADDRESS, t.port, TcpHostOptions.DEFAULT), 512);
        open.add(io.queue());
        NvmeHost.ConnectResult own = io.fabricsConnect(1, NvmeController.IO_SQSIZE, c.cntlid(), 0, HOST,
            RESTRICTED_NQN, NvmeController.hostIdFor(HOST));
        assertThat(own.ok()).as("the host's own I/O queue 1 after the intruder's: %s", own.completion()).isTrue();
        assertThat(host(hostSecret).authenticate(io, 10, ALL_HASHES, FFDHE2048, false).success()).isTrue();
        TestTarget.assertWriteReadBack(io, 24, 4096, 24);
    }

    @Test
    void aHostWithoutAKeyGetsNoFurther() throws Exception {
        start(1, false);
        NvmeHost admin = connectedAdmin();
        assertStatus(admin.identify(1, 0, 0), 1, SC_AUTH_REQUIRED, true);
        assertStatus(admin.setFeatures(NvmeController.FID_NUMBER_OF_QUEUES, 0), 1, SC_AUTH_REQUIRED, true);
    }

    @Test
    void anUnreadableKeyFileRefusesTheConnect() throws Exception {
        start(1, false);
        Files.setPosixFilePermissions(hostKeyFile, PosixFilePermissions.fromString("rw-r--r--"));
        NvmeHost admin = new NvmeHost(TcpHost.connect(ADDRESS, t.port, TcpHostOptions.DEFAULT), 512);
        open.add(admin.queue());
        NvmeHost.ConnectResult r = admin.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, KATO_MS, HOST,
            RESTRICTED_NQN, NvmeController.hostIdFor(HOST));
        assertStatus(r.completion(), 1, 0x84, true); // Connect Invalid Host, as nvmet when its key cannot be set up
        assertThat(observer.authFailures()).isEqualTo(1);
        Files.delete(hostKeyFile);
        NvmeHost again = new NvmeHost(TcpHost.connect(ADDRESS, t.port, TcpHostOptions.DEFAULT), 512);
        open.add(again.queue());
        assertStatus(again.fabricsConnect(0, NvmeController.ADMIN_SQSIZE, 0xFFFF, KATO_MS, HOST, RESTRICTED_NQN,
            NvmeController.hostIdFor(HOST)).completion(), 1, 0x84, true);
    }

    @Test
    void bidirectionalWithoutAControllerKeyFails() throws Exception {
        start(2, false);
        NvmeHost admin = connectedAdmin();
        DhchapHost h = new DhchapHost(HOST, RESTRICTED_NQN, 2, hostSecret, 0, ctrlSecret, id -> DhGroup.byId(id).prime());
        DhchapHost.Result r = h.authenticate(admin, 9, ALL_HASHES, NULL_GROUP, true);
        assertThat(r.failureReason()).as("%s", r).isEqualTo(1);
        assertFailsTheQueue(admin);
    }

    @Test
    void aControllerResponseTheHostRefusesEndsWithFailure2() throws Exception {
        start(0, true);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        DhchapHost h = new DhchapHost(HOST, RESTRICTED_NQN, 0, hostSecret, 0, Le.random(48, 5),
            id -> DhGroup.byId(id).prime());
        DhchapHost.Result r = h.authenticate(admin, 9, ALL_HASHES, FFDHE2048, true);
        assertThat(r.success()).isFalse();
        assertThat(r.detail()).contains("R2");
        assertOnlyThisHostFailed(admin, other, 24);
    }

    // ---- deadline, restarts, policy ----

    /**
     * A host that connects with KATO 0 (no keep-alive timer) and never authenticates holds no controller past
     * authTimeoutMs: the deadline is a timer started at the Connect, not a check at the host's next message.
     */
    @Test
    void aHostThatNeverAuthenticatesIsGoneWithinTheDeadlineEvenWithKato0() throws Exception {
        int deadlineMs = 1000;
        start(1, false, c -> c.authTimeoutMs = deadlineMs);
        NvmeController other = bystander();
        long start = System.nanoTime();
        NvmeHost admin = connectedAdmin(0);
        assertThat(admin.queue().awaitClosed(Duration.ofMillis(deadlineMs + 9000)))
            .as("the unauthenticated host's connection is closed within the deadline (and slack)").isTrue();
        assertThat(System.nanoTime() - start).as("not before the deadline")
            .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(deadlineMs));
        assertThat(observer.authFailures("failed")).isEqualTo(1);
        TestTarget.assertWriteReadBack(other.io(0), 104, 4096, 22);
    }

    /**
     * Negotiate after Negotiate without finishing: each would cost a DH key pair; after
     * {@link io.nvmf4j.core.Controller#MAX_AUTH_RESTARTS} restarts the next Negotiate fails the host.
     */
    @Test
    void negotiateRestartsAreBounded() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        for (int i = 0; i <= io.nvmf4j.core.Controller.MAX_AUTH_RESTARTS; i++) {
            assertThat(DhchapHost.send(admin, DhchapHost.negotiate(200 + i, ALL_HASHES, new int[]{5})).ok()).isTrue();
            Completion challenge = DhchapHost.receive(admin, DhchapHost.AL);
            assertThat(challenge.data()[1]).as("Challenge %d", i).isEqualTo((byte) 1);
        }
        assertThat(DhchapHost.send(admin, DhchapHost.negotiate(210, ALL_HASHES, new int[]{5})).ok()).isTrue();
        assertOnlyThisHostFailed(admin, other, 112);
        assertThat(observer.authFailures("failed")).isEqualTo(1);
    }

    /** The default for a host with a controller key: no null DH group (Failure1 05h, DH group not usable). */
    @Test
    void theNullGroupIsRefusedByDefaultWhereTheHostHasAControllerKey() throws Exception {
        start(1, true);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        assertThat(DhchapHost.send(admin, DhchapHost.negotiate(11, ALL_HASHES, NULL_GROUP)).ok()).isTrue();
        assertFailure1(DhchapHost.receive(admin, DhchapHost.AL), 5);
        assertOnlyThisHostFailed(admin, other, 120);
        // with a real group the same host authenticates bidirectionally
        assertThat(host(hostSecret).authenticate(connectedAdmin(), 12, ALL_HASHES, FFDHE2048, true).success()).isTrue();
    }

    /** dhchapHashes / dhchapDhGroups: the host's first allowed one is taken; none allowed is Failure1 04h / 05h. */
    @ParameterizedTest(name = "hashes {0}, groups {1}: reason {2}")
    @CsvSource({"sha512,ffdhe2048,4", "sha256,ffdhe4096,5"})
    void thePolicyOfTheHostsEntryRefusesOtherHashesAndGroups(String hash, String group, int reason) throws Exception {
        start(1, false, c -> {
            hostKey(c).dhchapHashes = List.of(hash);
            hostKey(c).dhchapDhGroups = List.of(group);
        });
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        assertThat(DhchapHost.send(admin, DhchapHost.negotiate(13, new int[]{1, 2}, new int[]{1, 2})).ok()).isTrue();
        assertFailure1(DhchapHost.receive(admin, DhchapHost.AL), reason);
        assertOnlyThisHostFailed(admin, other, 128);
        DhchapHost.Exchange x = host(hostSecret).start(connectedAdmin(), 14, ALL_HASHES, new int[]{0, 1, 2, 3});
        assertThat(x.challenge[8]).as("HASHID: the allowed one").isEqualTo((byte) (hash.equals("sha512") ? 3 : 1));
        assertThat(x.challenge[9]).as("DHGID: the allowed one").isEqualTo((byte) (group.equals("ffdhe2048") ? 1 : 3));
    }

    // ---- rotation and re-authentication ----

    @Test
    void aRotatedKeyAppliesToTheNextAuthenticationWhileConnectedHostsStay() throws Exception {
        start(1, true);
        NvmeController before = authenticated(host(hostSecret), ALL_HASHES, FFDHE2048, true, 1);
        byte[] oldSecret = hostSecret;
        hostSecret = Le.random(64, 3);
        writeKey("host.key", 3, hostSecret);

        TestTarget.assertWriteReadBack(before.io(0), 32, 4096, 14);
        NvmeController after = authenticated(host(hostSecret), ALL_HASHES, FFDHE2048, true, 1);
        TestTarget.assertWriteReadBack(after.io(0), 40, 4096, 15);
        NvmeHost stale = connectedAdmin();
        DhchapHost staleHost = new DhchapHost(HOST, RESTRICTED_NQN, 1, oldSecret, keyHash(ctrlKeyFile), ctrlSecret,
            id -> DhGroup.byId(id).prime());
        assertThat(staleHost.authenticate(stale, 1, ALL_HASHES, FFDHE2048, false).failureReason())
            .as("the old key after rotation").isEqualTo(1);

        // re-authentication of the connected controller's admin queue reads the rotated file
        assertThat(host(hostSecret).authenticate(before.admin(), 77, ALL_HASHES, FFDHE2048, true).success()).isTrue();
        assertThat(before.admin().identify(1, 0, 0).ok()).isTrue();
        TestTarget.assertWriteReadBack(before.io(0), 48, 4096, 16);
        // and a re-authentication with the old key fails that controller
        assertThat(staleHost.authenticate(before.admin(), 78, ALL_HASHES, FFDHE2048, false).success()).isFalse();
        assertFailsTheQueue(before.admin());
        TestTarget.assertWriteReadBack(after.io(0), 56, 4096, 17);
    }

    // ---- bad input ----

    @Test
    void sqeFieldsAreChecked() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        byte[] neg = DhchapHost.negotiate(1, ALL_HASHES, FFDHE2048);
        assertStatus(admin.executeWrite(DhchapHost.sendCommand(neg.length).u8(43, 0xEA), neg), 0, SC_INVALID_FIELD,
            true);
        assertStatus(admin.executeWrite(DhchapHost.sendCommand(neg.length).u8(41, 2), neg), 0, SC_INVALID_FIELD,
            true);
        assertStatus(admin.executeWrite(DhchapHost.sendCommand(0), neg), 0, SC_INVALID_FIELD, true);
        byte[] huge = new byte[8192];
        assertStatus(admin.executeWrite(DhchapHost.sendCommand(huge.length), huge), 0, SC_INVALID_FIELD, true);
        assertStatus(admin.executeRead(DhchapHost.receiveCommand(1 << 20), 1 << 20), 0, SC_INVALID_FIELD, true);
        assertStatus(admin.executeWrite(DhchapHost.sendCommand(neg.length + 8), neg), 0, 0x0F, true); // SGL length
        // none of that touched the protocol: the host still authenticates on this queue
        assertThat(host(hostSecret).authenticate(admin, 2, ALL_HASHES, FFDHE2048, false).success()).isTrue();
        TestTarget.assertWriteReadBack(other.io(0), 64, 4096, 18);
    }

    @Test
    void aReplyBeforeNegotiateFailsTheHostAtOnce() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        byte[] reply = new byte[16 + 64];
        reply[0] = 1;
        reply[1] = 2;
        reply[6] = 32;
        assertThat(DhchapHost.send(admin, reply).ok()).isTrue();
        assertThat(observer.authFailures("incorrect protocol message")).isEqualTo(1);
        assertOnlyThisHostFailed(admin, other, 72);
    }

    @Test
    void aWrongTransactionIdGetsFailure1IncorrectPayload() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        DhchapHost.Exchange x = host(hostSecret).start(admin, 40, ALL_HASHES, FFDHE2048);
        byte[] reply = x.buildReply(false);
        reply[4] = 41;
        assertThat(DhchapHost.send(admin, reply).ok()).isTrue();
        assertFailure1(DhchapHost.receive(admin, DhchapHost.AL), 6); // incorrect payload
        assertOnlyThisHostFailed(admin, other, 80);
    }

    @Test
    void aReplayedReplyFailsTheHost() throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        DhchapHost h = host(hostSecret);
        DhchapHost.Exchange x = h.start(admin, 50, ALL_HASHES, FFDHE2048);
        byte[] reply = x.buildReply(false);
        assertThat(DhchapHost.send(admin, reply).ok()).isTrue();
        Completion s1 = DhchapHost.receive(admin, DhchapHost.AL);
        assertThat(s1.data()[1]).as("Success1").isEqualTo((byte) 3);
        assertThat(admin.identify(1, 0, 0).ok()).isTrue();
        assertThat(DhchapHost.send(admin, reply).ok()).isTrue(); // the same Reply again
        assertFailsTheQueue(admin);
        // a replay into a new transaction fails too: its challenge differs
        NvmeHost again = connectedAdmin();
        h.start(again, 50, ALL_HASHES, FFDHE2048);
        assertThat(DhchapHost.send(again, reply).ok()).isTrue();
        assertFailure1(DhchapHost.receive(again, DhchapHost.AL), 1);
        assertFailsTheQueue(again);
        TestTarget.assertWriteReadBack(other.io(0), 88, 4096, 21);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"short negotiate,6", "unknown hash,4", "unknown group,5", "two protocols,4", "secure channel,3",
        "DH value zero,5", "oversize DHVLEN,6", "HL mismatch,6"})
    void malformedMessagesGetTheirFailure1Reason(String kind, int reason) throws Exception {
        start(1, false);
        NvmeController other = bystander();
        NvmeHost admin = connectedAdmin();
        DhchapHost h = host(hostSecret);
        byte[] neg = DhchapHost.negotiate(60, ALL_HASHES, FFDHE2048);
        switch (kind) {
            case "short negotiate" -> neg = java.util.Arrays.copyOf(neg, 20);
            case "unknown hash" -> neg = DhchapHost.negotiate(60, new int[]{0, 7}, FFDHE2048);
            case "unknown group" -> neg = DhchapHost.negotiate(60, ALL_HASHES, new int[]{6, 9});
            case "two protocols" -> neg[7] = 2;
            case "secure channel" -> neg[6] = 1;
            default -> neg = neg;
        }
        if (reason == 6 && !kind.equals("short negotiate") || kind.equals("DH value zero")) {
            DhchapHost.Exchange x = h.start(admin, 60, ALL_HASHES, FFDHE2048);
            byte[] reply = x.buildReply(false);
            int hl = reply[6];
            switch (kind) {
                case "DH value zero" -> java.util.Arrays.fill(reply, 16 + 2 * hl, reply.length, (byte) 0);
                case "oversize DHVLEN" -> {
                    reply[10] = (byte) 0xFF;
                    reply[11] = (byte) 0x7F;
                }
                default -> reply[6] = (byte) (hl + 16);
            }
            assertThat(DhchapHost.send(admin, reply).ok()).isTrue();
        } else {
            assertThat(DhchapHost.send(admin, neg).ok()).isTrue();
        }
        assertFailure1(DhchapHost.receive(admin, DhchapHost.AL), reason);
        assertOnlyThisHostFailed(admin, other, 96);
    }

    @Test
    void aReceiveTooSmallForTheChallengeIsAnInternalError() throws Exception {
        start(1, false);
        NvmeHost admin = connectedAdmin();
        assertThat(DhchapHost.send(admin, DhchapHost.negotiate(3, ALL_HASHES, FFDHE2048)).ok()).isTrue();
        assertStatus(DhchapHost.receive(admin, 64), 0, 0x06, false);
    }

    /**
     * Turning allowAnyHost off while a host with keys is not in hosts is refused (the document would not load again)
     * and changes nothing.
     */
    @Test
    void allowAnyHostOffIsRefusedWhileAKeyedHostIsNotInHosts() throws Exception {
        start(1, false, c -> {
            restricted(c).hosts.remove(HOST);
            restricted(c).allowAnyHost = true;
        });
        assertThatThrownBy(() -> t.nvmf().setAllowAnyHost(RESTRICTED_NQN, false))
            .isInstanceOf(io.nvmf4j.config.ConfigException.class)
            .hasMessageContaining("is not in hosts (and allowAnyHost is off)");
        assertThat(restricted(t.nvmf().configSnapshot()).allowAnyHost).as("unchanged").isTrue();
    }
}
