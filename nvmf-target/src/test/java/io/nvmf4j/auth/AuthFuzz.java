package io.nvmf4j.auth;

import io.nvmf4j.fuzz.Escape;
import io.nvmf4j.fuzz.FuzzTarget;
import io.nvmf4j.fuzz.Mutator;
import io.nvmf4j.testhost.DhchapHost;

import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Fuzz target {@code auth}: one DH-HMAC-CHAP exchange on an {@link AuthSession} with one of its messages (Negotiate,
 * Reply, Success2, or an extra one at a random point) mutated AFL-style, and a random Receive length. Escapes: an
 * exception out of the session, an answer of the wrong length, a Receive refused although its length was enough,
 * and the session calling a host authenticated whose response R1 was not the right one. Afterwards a clean exchange
 * on the same session (a new Negotiate restarts it) must still succeed.
 */
public final class AuthFuzz implements FuzzTarget {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-0000000000f1";
    static final String SUB = "nqn.2024-01.io.nvmf4j:fuzz";
    private final byte[] hostSecret = new byte[32];
    private final byte[] ctrlSecret = new byte[48];
    private final HostKeys keys;
    private AuthSession last;

    public AuthFuzz() {
        new SplittableRandom(7).nextBytes(hostSecret);
        new SplittableRandom(8).nextBytes(ctrlSecret);
        keys = new HostKeys(DhchapKey.parse(DhchapKey.format(1, hostSecret)),
            DhchapKey.parse(DhchapKey.format(0, ctrlSecret)));
    }

    @Override
    public String name() {
        return "auth";
    }

    private AuthSession session(boolean admin) {
        // every hash and group: the fuzz is about the messages
        return new AuthSession(HOST, SUB, admin, new FixedKeys(keys, new AuthPolicy(~0, ~0)), 30_000);
    }

    private DhchapHost host() {
        return new DhchapHost(HOST, SUB, 1, hostSecret, 0, ctrlSecret, id -> DhGroup.byId(id).prime());
    }

    @Override
    public void run(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        AuthSession s = session(r.nextBoolean());
        last = s;
        int tid = r.nextInt(65536);
        int[] groups = {r.nextInt(16) == 0 ? 1 : 0};
        int mutate = r.nextInt(4); // 0 Negotiate, 1 Reply, 2 Success2, 3 an extra message
        boolean bidirectional = r.nextBoolean();
        try {
            byte[] neg = DhchapHost.negotiate(tid, new int[]{1 + r.nextInt(3)}, groups);
            send(s, mutate == 0 ? mutated(neg, r) : neg);
            extra(s, r, mutate == 3 && r.nextBoolean(), neg);
            byte[] challenge = receive(s, r);
            if (challenge == null || challenge.length < AuthMessages.HEADER
                || (challenge[1] & 0xFF) != AuthMessages.CHALLENGE) {
                return;
            }
            DhchapHost.Exchange x = host().new Exchange(tid, challenge);
            byte[] reply = x.buildReply(bidirectional);
            byte[] sent = mutate == 1 ? mutated(reply, r) : reply;
            send(s, sent);
            int hl = challenge[AuthMessages.HL];
            boolean sameR1 = sent.length >= 16 + hl && Arrays.equals(Arrays.copyOfRange(sent, 16, 16 + hl),
                Arrays.copyOfRange(reply, 16, 16 + hl));
            if (s.authenticated() && !sameR1) {
                throw new Escape("authenticated with a response R1 that is not the host's");
            }
            extra(s, r, mutate == 3, reply);
            receive(s, r);
            byte[] ok = new byte[16];
            ok[0] = 1;
            ok[1] = AuthMessages.SUCCESS2;
            ok[4] = (byte) tid;
            ok[5] = (byte) (tid >>> 8);
            send(s, mutate == 2 ? mutated(ok, r) : ok);
            if (s.authenticated() && !sameR1) {
                throw new Escape("authenticated after Success2 with a wrong response R1");
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            if (e instanceof Escape) {
                throw e;
            }
            throw new Escape("exception out of the session: " + e, e);
        }
    }

    /** A session a case left behind still authenticates a host that does it right. */
    @Override
    public void checkStillServes() {
        AuthSession s = last == null ? session(true) : last;
        try {
            send(s, DhchapHost.negotiate(9, new int[]{2}, new int[]{0}));
            byte[] c = s.receive(4096);
            DhchapHost.Exchange x = host().new Exchange(9, c);
            send(s, x.buildReply(false));
            byte[] ok = s.receive(4096);
            if (!s.authenticated() || ok[1] != AuthMessages.SUCCESS1) {
                throw new Escape("a clean exchange after the cases did not authenticate");
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] mutated(byte[] m, SplittableRandom r) {
        byte[] b = Mutator.mutate(m, r, AuthMessages.MAX_LENGTH);
        return b.length == 0 ? new byte[1] : b; // TL 0 never reaches the session (Invalid Field)
    }

    /** A Send, with its work (key reads, DH) run here at once, as the queue's thread would see it done. */
    private static void send(AuthSession s, byte[] m) {
        AuthSession.Work work = s.send(m);
        if (work != null) {
            work.run();
            work.finish();
        }
        s.takeFailure();
    }

    /** Sometimes an extra Send (a mutated copy of {@code base}) or Receive where none belongs. */
    private static void extra(AuthSession s, SplittableRandom r, boolean now, byte[] base) {
        if (!now) {
            return;
        }
        if (r.nextBoolean()) {
            send(s, mutated(base, r));
        } else {
            receive(s, r);
        }
    }

    private static byte[] receive(AuthSession s, SplittableRandom r) {
        int al = r.nextInt(4) == 0 ? 1 + r.nextInt(600) : 4096;
        byte[] m = s.receive(al);
        s.takeFailure();
        if (m != null && m.length != al) {
            throw new Escape("a Receive of " + al + " bytes answered " + m.length);
        }
        // the largest message the controller sends is a Challenge with SHA-512 and an ffdhe8192 value (a mutated
        // Negotiate may pick any group the target supports): a Receive at least that long is never too small
        if (m == null && al >= 16 + 64 + 1024) {
            throw new Escape("a Receive of " + al + " bytes refused as too small");
        }
        return m;
    }
}
