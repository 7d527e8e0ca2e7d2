package io.nvmf4j.auth;

import javax.crypto.KeyAgreement;
import javax.crypto.interfaces.DHPublicKey;
import javax.crypto.spec.DHParameterSpec;
import javax.crypto.spec.DHPublicKeySpec;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.HashMap;
import java.util.Map;

/**
 * The DH-HMAC-CHAP Diffie-Hellman groups (NVMe Base 2.x figure "DH group identifiers"): none, and the RFC 7919
 * finite-field groups ffdhe2048 .. ffdhe8192 (generator 2; primes in {@code ffdhe.txt}). Values on the wire are
 * big-endian, padded to the size of the prime, as Linux's {@code nvme_auth_gen_pubkey} writes them.
 */
public enum DhGroup {
    NULL(0, 0), FFDHE2048(1, 2048), FFDHE3072(2, 3072), FFDHE4096(3, 4096), FFDHE6144(4, 6144),
    FFDHE8192(5, 8192);

    private static final Map<String, BigInteger> PRIMES = loadPrimes();
    private final int id;
    private final int bits;

    DhGroup(int id, int bits) {
        this.id = id;
        this.bits = bits;
    }

    /** The group with identifier {@code id}, or null. */
    public static DhGroup byId(int id) {
        for (DhGroup g : values()) {
            if (g.id == id) {
                return g;
            }
        }
        return null;
    }

    public int id() {
        return id;
    }

    /** Bytes of a public value (0 for the null group). */
    public int valueLength() {
        return bits / 8;
    }

    public BigInteger prime() {
        return PRIMES.get(name().toLowerCase());
    }

    /** A fresh ephemeral key pair. */
    public KeyPair generate() {
        try {
            KeyPairGenerator g = KeyPairGenerator.getInstance("DH");
            g.initialize(new DHParameterSpec(prime(), BigInteger.TWO));
            return g.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("DH " + this + " unavailable", e);
        }
    }

    /** The public value of {@code pair} as sent: big-endian, {@link #valueLength()} bytes. */
    public byte[] publicValue(KeyPair pair) {
        return pad(((DHPublicKey) pair.getPublic()).getY());
    }

    /**
     * The shared secret with the peer's public value, padded to {@link #valueLength()}; IllegalArgumentException when
     * the value has the wrong length or is outside 2 .. p-2 (RFC 7919 section 5.1).
     */
    public byte[] sharedSecret(KeyPair own, byte[] peer) {
        BigInteger p = prime();
        BigInteger y = new BigInteger(1, peer);
        if (peer.length != valueLength() || y.compareTo(BigInteger.ONE) <= 0
            || y.compareTo(p.subtract(BigInteger.ONE)) >= 0) {
            throw new IllegalArgumentException("DH value out of range for " + this);
        }
        try {
            KeyAgreement ka = KeyAgreement.getInstance("DH");
            ka.init(own.getPrivate());
            ka.doPhase(KeyFactory.getInstance("DH").generatePublic(new DHPublicKeySpec(y, p, BigInteger.TWO)), true);
            return pad(new BigInteger(1, ka.generateSecret()));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("DH value refused for " + this + ": " + e.getMessage());
        }
    }

    private byte[] pad(BigInteger v) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[valueLength()];
        int n = Math.min(b.length, out.length);
        System.arraycopy(b, b.length - n, out, out.length - n, n);
        return out;
    }

    private static Map<String, BigInteger> loadPrimes() {
        Map<String, BigInteger> m = new HashMap<>();
        try (InputStream in = DhGroup.class.getResourceAsStream("ffdhe.txt")) {
            if (in == null) {
                throw new IllegalStateException("ffdhe.txt missing from the class path");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    String[] f = line.trim().split("\\s+");
                    m.put(f[0], new BigInteger(f[1], 16));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return m;
    }
}
