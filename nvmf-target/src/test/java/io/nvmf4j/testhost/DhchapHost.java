package io.nvmf4j.testhost;

import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.interfaces.DHPublicKey;
import javax.crypto.spec.DHParameterSpec;
import javax.crypto.spec.DHPublicKeySpec;
import javax.crypto.spec.SecretKeySpec;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * The host side of DH-HMAC-CHAP (NVMe Base 2.x section 8.3.4.5), written for the tests from the specification's
 * definitions and independently of the target's {@code io.nvmf4j.auth} code (only the RFC 7919 primes are shared,
 * through {@code primes}): Negotiate, the Challenge, the Reply with R1 (and C2 when bidirectional), Success1 with R2
 * checked, Success2 or Failure2. Each message is one Authentication Send or Receive on {@link NvmeHost}.
 */
public final class DhchapHost {
    public static final int FCTYPE_AUTH_SEND = 0x05;
    public static final int FCTYPE_AUTH_RECV = 0x06;
    public static final int AL = 4096;
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The outcome: success, or the RESCODE_EXP of the controller's Failure1 (or -1: a command failed). */
    public record Result(boolean success, int failureReason, Completion completion, String detail) {
    }

    private final String hostnqn;
    private final String subnqn;
    private final int keyHash;
    private final byte[] key;
    private final int ctrlKeyHash;
    private final byte[] ctrlKey;
    private final IntFunction<BigInteger> primes;

    /**
     * @param keyHash, key         the host key (its DHHC-1 hash field and bytes)
     * @param ctrlKeyHash, ctrlKey the controller key, or null for unidirectional authentication
     * @param primes               the ffdhe prime of a DH group id
     */
    public DhchapHost(String hostnqn, String subnqn, int keyHash, byte[] key, int ctrlKeyHash, byte[] ctrlKey,
                      IntFunction<BigInteger> primes) {
        this.hostnqn = hostnqn;
        this.subnqn = subnqn;
        this.keyHash = keyHash;
        this.key = key;
        this.ctrlKeyHash = ctrlKeyHash;
        this.ctrlKey = ctrlKey;
        this.primes = primes;
    }

    public static Sqe sendCommand(int tl) {
        return Sqe.fabrics(FCTYPE_AUTH_SEND).u8(41, 1).u8(42, 1).u8(43, 0xE9).u32(44, tl);
    }

    public static Sqe receiveCommand(int al) {
        return Sqe.fabrics(FCTYPE_AUTH_RECV).u8(41, 1).u8(42, 1).u8(43, 0xE9).u32(44, al);
    }

    public static Completion send(NvmeHost q, byte[] message) {
        return q.executeWrite(sendCommand(message.length), message);
    }

    public static Completion receive(NvmeHost q, int al) {
        return q.executeRead(receiveCommand(al), al);
    }

    /** AUTH_Negotiate: one DH-HMAC-CHAP descriptor with the hash and DH group ids offered, in preference order. */
    public static byte[] negotiate(int tid, int[] hashes, int[] groups) {
        ByteBuffer b = le(8 + 64);
        b.put(0, (byte) 0).put(1, (byte) 0).putShort(4, (short) tid).put(6, (byte) 0).put(7, (byte) 1);
        b.put(8, (byte) 1).put(10, (byte) hashes.length).put(11, (byte) groups.length);
        for (int i = 0; i < hashes.length; i++) {
            b.put(12 + i, (byte) hashes[i]);
        }
        for (int i = 0; i < groups.length; i++) {
            b.put(42 + i, (byte) groups[i]);
        }
        return b.array();
    }

    /** The parsed Challenge (or Failure1) and the Reply this host answers it with. */
    public final class Exchange {
        public final int tid;
        public final byte[] challenge;
        public int hashId;
        public int group;
        public int s1;
        public byte[] c1;
        public byte[] sessionKey;
        public byte[] c2;
        public int s2;
        public byte[] reply;

        public Exchange(int tid, byte[] challenge) {
            this.tid = tid;
            this.challenge = challenge;
        }

        public boolean isFailure1() {
            return (challenge[1] & 0xFF) == 0xF1;
        }

        /** Builds the Reply: R1 over C1 (augmented with the DH session key), C2 and the host's DH value. */
        public byte[] buildReply(boolean bidirectional) throws GeneralSecurityException {
            ByteBuffer m = ByteBuffer.wrap(challenge).order(ByteOrder.LITTLE_ENDIAN);
            int hl = m.get(6) & 0xFF;
            hashId = m.get(8) & 0xFF;
            group = m.get(9) & 0xFF;
            int dhvlen = m.getShort(10) & 0xFFFF;
            s1 = m.getInt(12);
            c1 = Arrays.copyOfRange(challenge, 16, 16 + hl);
            byte[] hostValue = new byte[0];
            if (group != 0) {
                BigInteger p = primes.apply(group);
                KeyPairGenerator g = KeyPairGenerator.getInstance("DH");
                g.initialize(new DHParameterSpec(p, BigInteger.TWO));
                KeyPair pair = g.generateKeyPair();
                hostValue = unsigned(((DHPublicKey) pair.getPublic()).getY(), dhvlen);
                KeyAgreement ka = KeyAgreement.getInstance("DH");
                ka.init(pair.getPrivate());
                BigInteger y = new BigInteger(1, Arrays.copyOfRange(challenge, 16 + hl, 16 + hl + dhvlen));
                ka.doPhase(KeyFactory.getInstance("DH").generatePublic(new DHPublicKeySpec(y, p, BigInteger.TWO)),
                    true);
                sessionKey = unsigned(new BigInteger(1, ka.generateSecret()), dhvlen);
            }
            byte[] r1 = hmac(hashId, transform(keyHash, key, hostnqn), concat(augment(c1), le32(s1), le16(tid),
                new byte[]{0}, ascii("HostHost"), ascii(hostnqn), new byte[]{0}, ascii(subnqn)));
            c2 = new byte[hl];
            if (bidirectional) {
                RANDOM.nextBytes(c2);
                s2 = RANDOM.nextInt(Integer.MAX_VALUE - 1) + 1;
            }
            ByteBuffer r = le(16 + 2 * hl + hostValue.length);
            r.put(0, (byte) 1).put(1, (byte) 2).putShort(4, (short) tid).put(6, (byte) hl)
                .put(8, (byte) (bidirectional ? 1 : 0)).putShort(10, (short) hostValue.length).putInt(12, s2);
            r.put(16, r1).put(16 + hl, c2).put(16 + 2 * hl, hostValue);
            reply = r.array();
            return reply;
        }

        /** R2 as the controller should compute it. */
        public byte[] expectedR2() throws GeneralSecurityException {
            return hmac(hashId, transform(ctrlKeyHash, ctrlKey, subnqn), concat(augment(c2), le32(s2), le16(tid),
                new byte[]{0}, ascii("Controller"), ascii(subnqn), new byte[]{0}, ascii(hostnqn)));
        }

        private byte[] augment(byte[] c) throws GeneralSecurityException {
            if (sessionKey == null) {
                return c;
            }
            byte[] hashedKey = MessageDigest.getInstance(digestName(hashId)).digest(sessionKey);
            return hmac(hashId, hashedKey, c);
        }
    }

    /** Sends Negotiate and receives the Challenge (or a Failure1). */
    public Exchange start(NvmeHost q, int tid, int[] hashes, int[] groups) {
        Completion n = send(q, negotiate(tid, hashes, groups));
        if (!n.ok()) {
            throw new IllegalStateException("Negotiate failed: " + n);
        }
        Completion c = receive(q, AL);
        if (!c.ok()) {
            throw new IllegalStateException("Receive of the Challenge failed: " + c);
        }
        return new Exchange(tid, c.data());
    }

    /** The whole exchange on one queue. */
    public Result authenticate(NvmeHost q, int tid, int[] hashes, int[] groups, boolean bidirectional) {
        try {
            Exchange x = start(q, tid, hashes, groups);
            if (x.isFailure1()) {
                return new Result(false, x.challenge[7] & 0xFF, null, "Failure1 for Negotiate");
            }
            Completion r = send(q, x.buildReply(bidirectional));
            if (!r.ok()) {
                return new Result(false, -1, r, "Reply");
            }
            Completion s = receive(q, AL);
            if (!s.ok()) {
                return new Result(false, -1, s, "Receive of Success1");
            }
            byte[] m = s.data();
            if ((m[1] & 0xFF) == 0xF1) {
                return new Result(false, m[7] & 0xFF, s, "Failure1 for the Reply");
            }
            if ((m[1] & 0xFF) != 0x03) {
                return new Result(false, -1, s, "message id " + (m[1] & 0xFF) + " instead of Success1");
            }
            if (!bidirectional) {
                return new Result(true, 0, s, "authenticated");
            }
            int hl = m[6] & 0xFF;
            if (m[8] != 1 || !MessageDigest.isEqual(Arrays.copyOfRange(m, 16, 16 + hl), x.expectedR2())) {
                ByteBuffer f = le(16);
                f.put(0, (byte) 0).put(1, (byte) 0xF0).putShort(4, (short) tid).put(6, (byte) 1).put(7, (byte) 1);
                send(q, f.array());
                return new Result(false, 1, s, "the controller's response R2 is wrong");
            }
            ByteBuffer ok = le(16);
            ok.put(0, (byte) 1).put(1, (byte) 4).putShort(4, (short) tid);
            Completion done = send(q, ok.array());
            return new Result(done.ok(), 0, done, "authenticated both ways");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- the specification's functions, written out ----

    /** Key transformation: the key, or HMAC_h(key, nqn || "NVMe-over-Fabrics") when the key names hash h. */
    public static byte[] transform(int hash, byte[] key, String nqn) throws GeneralSecurityException {
        return hash == 0 ? key : hmac(hash, key, concat(ascii(nqn), ascii("NVMe-over-Fabrics")));
    }

    public static byte[] hmac(int hash, byte[] key, byte[] data) throws GeneralSecurityException {
        String name = switch (hash) {
            case 1 -> "HmacSHA256";
            case 2 -> "HmacSHA384";
            case 3 -> "HmacSHA512";
            default -> throw new IllegalArgumentException("hash " + hash);
        };
        Mac mac = Mac.getInstance(name);
        mac.init(new SecretKeySpec(key, name));
        return mac.doFinal(data);
    }

    private static String digestName(int hash) {
        return hash == 1 ? "SHA-256" : hash == 2 ? "SHA-384" : "SHA-512";
    }

    public static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] le32(int v) {
        return le(4).putInt(0, v).array();
    }

    static byte[] le16(int v) {
        return le(2).putShort(0, (short) v).array();
    }

    private static ByteBuffer le(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] unsigned(BigInteger v, int length) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[length];
        int n = Math.min(b.length, length);
        System.arraycopy(b, b.length - n, out, length - n, n);
        return out;
    }
}
