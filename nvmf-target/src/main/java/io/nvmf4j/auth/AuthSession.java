package io.nvmf4j.auth;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import static io.nvmf4j.auth.AuthMessages.*;

/**
 * The DH-HMAC-CHAP state of one queue, as Linux nvmet keeps it in {@code struct nvmet_sq} and steps it in
 * {@code fabrics-cmd-auth.c}: {@link #send} takes each message of an Authentication Send, {@link #receive} builds the
 * answer of an Authentication Receive. The step is the message the controller expects or sends next:
 *
 * <pre>
 * NEGOTIATE --send Negotiate--> CHALLENGE --receive--> REPLY --send Reply (R1 right)--> SUCCESS1
 *   --receive Success1 (R2 when the host sent C2)--> SUCCESS2 [--send Success2 when bidirectional--> done]
 * a refused Negotiate or Reply, a wrong T_ID --> FAILURE1 --receive Failure1--> the queue fails
 * a message out of order, Failure2 from the host --> the queue fails at once
 * </pre>
 *
 * A Negotiate restarts the exchange at any step (re-authentication; on the admin queue the key files are read
 * again); a Negotiate that restarts an exchange that has not finished counts against the controller's bound
 * ({@link KeySource#restart}), and past it the queue fails at once. A transaction left unfinished for the
 * controller's KATO (120 s without one) is forgotten, as nvmet's {@code auth_expired_work} does.
 *
 * <p>What costs milliseconds is not done on the queue's poll-group thread: reading the key files again and generating
 * the controller's DH key pair (at a Negotiate), and the DH shared secret (at a Reply). For those {@link #send}
 * returns a {@link Work} to run elsewhere, whose {@link Work#finish} then runs back on the queue's thread; until then
 * the session takes no other message (one that comes fails the queue). Owned by the queue's poll-group thread; every
 * method allocates (not the I/O path).
 */
public final class AuthSession {
    /** The controller's keys: the current ones, and read again from their files (admin queue re-authentication). */
    public interface KeySource {
        HostKeys keys();

        /** Reads the key files again (any thread: it runs in a {@link Work}). */
        HostKeys reload() throws IOException;

        /** The hashes and DH groups this host may use, read at each Negotiate. */
        AuthPolicy policy();

        /**
         * Counts a Negotiate that restarts an exchange which has not finished (any queue of the controller); false
         * once that is more than the controller allows.
         */
        boolean restart();
    }

    /**
     * The part of a message that runs off the queue's thread ({@link #run}, any thread), then {@link #finish} on the
     * queue's thread; a work the session has given up on in between (the queue failed) finishes as nothing.
     */
    public final class Work implements Runnable {
        private final Runnable offThread;
        private final Runnable onQueue;

        private Work(Runnable offThread, Runnable onQueue) {
            this.offThread = offThread;
            this.onQueue = onQueue;
        }

        @Override
        public void run() {
            offThread.run();
        }

        /** Back on the queue's thread: the session takes the result and goes on. */
        public void finish() {
            if (pending == this) {
                pending = null;
                onQueue.run();
            }
        }
    }

    private static final SecureRandom RANDOM = new SecureRandom();
    /** {@code nvme_auth_get_seqnum}: one counter for all queues, from a random start, never 0. */
    private static final AtomicInteger NEXT_SEQNUM = new AtomicInteger(RANDOM.nextInt());

    private final String hostnqn;
    private final String subnqn;
    private final boolean admin;
    private final KeySource keySource;
    private final long expiryNanos;

    private int step = NEGOTIATE;
    private int tid = -1;
    private int status;
    private int hashId;
    private DhGroup group;
    private KeyPair pair;
    private byte[] sessionKey;
    private byte[] c1;
    private int s1;
    private byte[] c2;
    private int s2;
    private boolean authenticated;
    private long lastMessageNanos;
    /** Set when the queue must fail: the RESCODE_EXP (with {@link #failureDetail}); read by {@link #takeFailure}. */
    private int failure;
    private String failureDetail;
    /** The work under way off the queue's thread, or null. */
    private Work pending;
    /** Whether a Negotiate started an exchange on this queue that has not succeeded or failed since. */
    private boolean exchangeOpen;

    public AuthSession(String hostnqn, String subnqn, boolean admin, KeySource keySource, int katoMs) {
        this.hostnqn = hostnqn;
        this.subnqn = subnqn;
        this.admin = admin;
        this.keySource = keySource;
        this.expiryNanos = (katoMs > 0 ? katoMs : 120_000) * 1_000_000L;
        this.lastMessageNanos = System.nanoTime();
    }

    /** Whether the host has proved it holds its key on this queue (and, bidirectionally, accepted the controller). */
    public boolean authenticated() {
        return authenticated;
    }

    /** The step (message id) the session is at, for tests and logs. */
    public int step() {
        return step;
    }

    /** The hash and DH group of the last negotiation. */
    public int hashId() {
        return hashId;
    }

    public DhGroup group() {
        return group;
    }

    /**
     * The failure the queue must be failed for since the last call (its RESCODE_EXP), or 0. After a non-zero answer,
     * {@link #failureDetail()} says why.
     */
    public int takeFailure() {
        int f = failure;
        failure = 0;
        return f;
    }

    public String failureDetail() {
        return failureDetail;
    }

    // ---- Authentication Send ----

    /**
     * Takes the message of an Authentication Send ({@code tl} bytes, at least 1). Returns null when it is taken, or
     * the {@link Work} that must run off this thread and then {@link Work#finish} here before the Send completes.
     */
    public Work send(byte[] m) {
        expireIfIdle();
        int type = u8(m, AUTH_TYPE);
        int id = m.length > AUTH_ID ? u8(m, AUTH_ID) : -1;
        Work work = null;
        if (pending != null) {
            failNow(INCORRECT_MESSAGE, "message type " + type + " id " + id + " while the previous one is processed");
        } else if (type == TYPE_COMMON && id == NEGOTIATE) {
            work = restart(m);
        } else if (id == FAILURE2 && (type == TYPE_COMMON || type == TYPE_DHCHAP)) {
            failNow(u8(m, FAIL_RESCODE_EXP), "the host refused the controller (Failure2)");
        } else if (type != TYPE_DHCHAP || id != step) {
            failNow(INCORRECT_MESSAGE, "message type " + type + " id " + id + " while expecting " + name(step));
        } else if (m.length < HEADER || u16(m, T_ID) != tid) {
            toFailure1(INCORRECT_PAYLOAD, m.length < HEADER ? "message of " + m.length + " bytes"
                : "transaction id " + u16(m, T_ID) + " instead of " + tid);
        } else if (id == REPLY) {
            work = reply(m);
        } else if (id == SUCCESS2) {
            authenticated = true;
            exchangeOpen = false;
            clearSecrets();
        } else {
            failNow(INCORRECT_MESSAGE, "message id " + id + " from the host");
        }
        lastMessageNanos = System.nanoTime();
        pending = work;
        return work;
    }

    /**
     * A Negotiate: the hash and group chosen here, then (off this thread) the key files read again on the admin
     * queue and the controller's DH key pair generated, for the Challenge.
     */
    private Work restart(byte[] m) {
        if (exchangeOpen && !keySource.restart()) {
            failNow(FAILED, "Negotiate restarted an unfinished exchange more often than the controller allows");
            return null;
        }
        exchangeOpen = true;
        clearSecrets();
        step = NEGOTIATE;
        int result = negotiate(m);
        if (result != 0) {
            toFailure1(result, "Negotiate refused");
            return null;
        }
        DhGroup g = group;
        IOException[] error = new IOException[1];
        KeyPair[] generated = new KeyPair[1];
        return new Work(() -> {
            try {
                if (admin) {
                    keySource.reload();
                }
                generated[0] = g == DhGroup.NULL ? null : g.generate();
            } catch (IOException e) {
                error[0] = e;
            }
        }, () -> {
            if (error[0] != null || keySource.keys() == null) {
                toFailure1(FAILED, error[0] != null ? error[0].getMessage() : "no key for this host");
            } else {
                pair = generated[0];
                step = CHALLENGE;
            }
        });
    }

    /** {@code nvmet_auth_negotiate}: 0, or the RESCODE_EXP to answer with. */
    private int negotiate(byte[] m) {
        if (m.length < NEG_DESCRIPTORS + DESC_SIZE) {
            return INCORRECT_PAYLOAD;
        }
        tid = u16(m, T_ID);
        if (u8(m, NEG_SC_C) != 0) {
            return CONCAT_MISMATCH; // secure channel concatenation needs TLS, which this target does not offer
        }
        if (u8(m, NEG_NAPD) != 1) {
            return HASH_UNUSABLE;
        }
        int d = NEG_DESCRIPTORS;
        int halen = u8(m, d + DESC_HALEN);
        int dhlen = u8(m, d + DESC_DHLEN);
        if (u8(m, d + DESC_AUTHID) != AUTHID_DHCHAP || halen > MAX_IDS || dhlen > MAX_IDS) {
            return INCORRECT_PAYLOAD;
        }
        if (keySource.keys() == null) {
            return FAILED; // no key for this host: nothing to authenticate with
        }
        AuthPolicy policy = keySource.policy();
        hashId = 0;
        for (int i = 0; i < halen && hashId == 0; i++) {
            int h = u8(m, d + DESC_HASH_IDS + i);
            hashId = Dhchap.hashLength(h) > 0 && policy.allowsHash(h) ? h : 0;
        }
        if (hashId == 0) {
            return HASH_UNUSABLE;
        }
        group = null;
        for (int i = 0; i < dhlen; i++) {
            DhGroup g = DhGroup.byId(u8(m, d + DESC_DH_IDS + i));
            if (g != null && policy.allowsGroup(g.id()) && (group == null || group == DhGroup.NULL)) {
                group = g; // the host's first allowed group, a real one before the null group
            }
        }
        return group == null ? DHGROUP_UNUSABLE : 0;
    }

    /** {@code nvmet_auth_reply}: the lengths here, the DH shared secret off this thread, then R1 and C2. */
    private Work reply(byte[] m) {
        int hl = u8(m, HL);
        int dhvlen = u16(m, DHVLEN);
        if (hl != Dhchap.hashLength(hashId) || HEADER + 2L * hl + dhvlen > m.length) {
            toFailure1(INCORRECT_PAYLOAD, "Reply lengths HL " + hl + " DHVLEN " + dhvlen + " in " + m.length + " bytes");
            return null;
        }
        if ((dhvlen != 0) != (group != DhGroup.NULL)) {
            toFailure1(INCORRECT_PAYLOAD, "DH value of " + dhvlen + " bytes with group " + group);
            return null;
        }
        if (dhvlen == 0) {
            checkReply(m, hl);
            return null;
        }
        DhGroup g = group;
        KeyPair p = pair;
        byte[] value = Arrays.copyOfRange(m, HEADER + 2 * hl, HEADER + 2 * hl + dhvlen);
        Object[] result = new Object[1];
        return new Work(() -> {
            try {
                result[0] = g.sharedSecret(p, value);
            } catch (IllegalArgumentException e) {
                result[0] = e;
            }
        }, () -> {
            if (result[0] instanceof IllegalArgumentException e) {
                toFailure1(DHGROUP_UNUSABLE, e.getMessage());
            } else {
                sessionKey = (byte[]) result[0];
                checkReply(m, hl);
            }
        });
    }

    /** R1 against the host's key (with the session key in the challenge when DH was used); keeps C2. */
    private void checkReply(byte[] m, int hl) {
        HostKeys keys = keySource.keys();
        byte[] expected = Dhchap.hostResponse(hashId, Dhchap.transformKey(keys.host(), hostnqn), challenge(c1), s1,
            tid, 0, hostnqn, subnqn);
        if (!MessageDigest.isEqual(expected, Arrays.copyOfRange(m, HEADER, HEADER + hl))) {
            toFailure1(FAILED, "the host's response does not match its key");
            return;
        }
        s2 = u32(m, SEQNUM);
        boolean cvalid = u8(m, REPLY_CVALID) != 0;
        if (cvalid && s2 != 0) {
            c2 = Arrays.copyOfRange(m, HEADER + hl, HEADER + 2 * hl);
        } else {
            authenticated = true; // unidirectional: the host has proved its key
            exchangeOpen = false;
            c2 = null;
        }
        step = SUCCESS1;
    }

    // ---- Authentication Receive ----

    /** Builds the answer of an Authentication Receive of {@code al} bytes; null asks for Internal Error, as nvmet. */
    public byte[] receive(int al) {
        expireIfIdle();
        lastMessageNanos = System.nanoTime();
        byte[] out = new byte[al];
        if (pending != null) {
            failNow(INCORRECT_MESSAGE, "Authentication Receive while the previous message is processed");
            return out;
        }
        if (step == CHALLENGE) {
            return challengeMessage(out);
        }
        if (step == SUCCESS1) {
            if (al < HEADER + (c2 == null ? 0 : Dhchap.hashLength(hashId))) {
                return null;
            }
            HostKeys keys = keySource.keys();
            if (c2 != null && keys.controller() == null) {
                toFailure1(FAILED, "the host asked the controller to authenticate (C2), but it has no dhchapCtrlKey");
                return failure1(out);
            }
            header(out, TYPE_DHCHAP, SUCCESS1);
            out[HL] = (byte) Dhchap.hashLength(hashId);
            if (c2 != null) {
                byte[] r2 = Dhchap.controllerResponse(hashId, Dhchap.transformKey(keys.controller(), subnqn),
                    challenge(c2), s2, tid, subnqn, hostnqn);
                System.arraycopy(r2, 0, out, HEADER, r2.length);
                out[SUCCESS1_RVALID] = 1;
            } else {
                clearSecrets();
            }
            step = SUCCESS2;
            return out;
        }
        if (step != FAILURE1) {
            toFailure1(FAILED, "Authentication Receive while expecting " + name(step));
        }
        return failure1(out);
    }

    /** {@code nvmet_auth_challenge}: a fresh C1 and S1 (and the controller's DH value). */
    private byte[] challengeMessage(byte[] out) {
        int hl = Dhchap.hashLength(hashId);
        if (out.length < HEADER + hl + group.valueLength()) {
            return null;
        }
        s1 = nextSeqnum();
        c1 = new byte[hl];
        RANDOM.nextBytes(c1);
        header(out, TYPE_DHCHAP, CHALLENGE);
        out[HL] = (byte) hl;
        out[CHAL_HASHID] = (byte) hashId;
        out[CHAL_DHGID] = (byte) group.id();
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        b.putShort(DHVLEN, (short) group.valueLength());
        b.putInt(SEQNUM, s1);
        System.arraycopy(c1, 0, out, HEADER, hl);
        if (group != DhGroup.NULL) {
            byte[] v = group.publicValue(pair); // the pair generated after the Negotiate
            System.arraycopy(v, 0, out, HEADER + hl, v.length);
        }
        step = REPLY;
        return out;
    }

    private byte[] failure1(byte[] out) {
        if (out.length >= FAILURE_SIZE) {
            header(out, TYPE_COMMON, FAILURE1);
            out[FAIL_RESCODE] = RESCODE_FAILED;
            out[FAIL_RESCODE_EXP] = (byte) status;
        }
        authenticated = false;
        clearSecrets();
        failNow(status, failureDetail == null ? AuthMessages.reason(status) : failureDetail);
        return out;
    }

    // ---- state ----

    /** The challenge as the response hashes it: augmented with the session key when DH was used. */
    private byte[] challenge(byte[] c) {
        return sessionKey == null ? c : Dhchap.augmentedChallenge(hashId, sessionKey, c);
    }

    private void toFailure1(int rescodeExp, String detail) {
        step = FAILURE1;
        status = rescodeExp;
        failureDetail = AuthMessages.reason(rescodeExp) + ": " + detail;
    }

    private void failNow(int rescodeExp, String detail) {
        step = FAILURE2;
        pending = null;
        exchangeOpen = false;
        status = rescodeExp;
        failure = rescodeExp == 0 ? FAILED : rescodeExp;
        failureDetail = detail.startsWith(AuthMessages.reason(status)) ? detail
            : AuthMessages.reason(failure) + ": " + detail;
        authenticated = false;
        clearSecrets();
    }

    private void expireIfIdle() {
        if (step != NEGOTIATE && System.nanoTime() - lastMessageNanos > expiryNanos) {
            step = NEGOTIATE; // the transaction expired: only a new Negotiate is taken
            tid = -1;
            clearSecrets();
        }
    }

    private void clearSecrets() {
        if (sessionKey != null) {
            Arrays.fill(sessionKey, (byte) 0);
        }
        sessionKey = null;
        pair = null;
        c1 = null;
        c2 = null;
    }

    private void header(byte[] out, int type, int id) {
        out[AUTH_TYPE] = (byte) type;
        out[AUTH_ID] = (byte) id;
        out[T_ID] = (byte) tid;
        out[T_ID + 1] = (byte) (tid >>> 8);
    }

    private static int nextSeqnum() {
        int s;
        do {
            s = NEXT_SEQNUM.incrementAndGet();
        } while (s == 0);
        return s;
    }

    private static String name(int step) {
        return switch (step) {
            case NEGOTIATE -> "Negotiate";
            case CHALLENGE -> "a Receive of the Challenge";
            case REPLY -> "Reply";
            case SUCCESS1 -> "a Receive of Success1";
            case SUCCESS2 -> "Success2";
            case FAILURE1 -> "a Receive of Failure1";
            default -> "nothing (failed)";
        };
    }

    private static int u8(byte[] m, int off) {
        return off < m.length ? m[off] & 0xFF : 0;
    }

    private static int u16(byte[] m, int off) {
        return u8(m, off) | u8(m, off + 1) << 8;
    }

    private static int u32(byte[] m, int off) {
        return u16(m, off) | u16(m, off + 2) << 16;
    }
}
