package io.nvmf4j.cmd;

import io.nvmf4j.auth.AuthMessages;
import io.nvmf4j.auth.AuthSession;
import io.nvmf4j.core.CommandHandler;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Request;
import io.nvmf4j.engine.ControllerLog;
import io.nvmf4j.nvme.NvmeStatus;

/**
 * Authentication Send (fctype 05h) and Authentication Receive (06h), as Linux nvmet's {@code fabrics-cmd-auth.c}:
 * the SQE is checked here (SECP E9h, SPSP0 = SPSP1 = 01h, a TL / AL of 1 .. {@link AuthMessages#MAX_LENGTH}), the
 * messages by the queue's {@link AuthSession}, whose key reads and DH computations run in {@link AuthWork} before the
 * Send completes. Both complete with success while the protocol runs; a failed
 * authentication (a Failure1 handed to the host, a message out of order, the host's Failure2) is logged with the host
 * NQN and counted. On the admin queue it tears down the controller (nvmet's {@code nvmet_ctrl_fatal_error}); on an
 * I/O queue it ends that queue only, as SPDK's {@code nvmf_auth_disconnect_qpair} does: authentication is per queue,
 * and the cntlid, host NQN and host ID an I/O queue's Connect names are no secret, so a party without the key
 * cannot end an authenticated host's controller by failing on an I/O queue of it (docs/security.md,
 * Authentication).
 */
final class AuthCommands {
    private final CommandHandler send = this::executeSend;
    private final CommandHandler receive = this::executeReceive;

    int parseSend(Request req) {
        return parse(req, send, Request.XFER_H2C);
    }

    int parseReceive(Request req) {
        return parse(req, receive, Request.XFER_C2H);
    }

    private static int parse(Request req, CommandHandler handler, int dir) {
        int field = req.sqe.u8(AuthMessages.SQE_SECP) != AuthMessages.SECP_DHCHAP ? AuthMessages.SQE_SECP
            : req.sqe.u8(AuthMessages.SQE_SPSP0) != AuthMessages.SPSP ? AuthMessages.SQE_SPSP0
            : req.sqe.u8(AuthMessages.SQE_SPSP1) != AuthMessages.SPSP ? AuthMessages.SQE_SPSP1 : -1;
        long length = Integer.toUnsignedLong(req.sqe.u32(AuthMessages.SQE_LENGTH));
        if (field < 0 && (length == 0 || length > AuthMessages.MAX_LENGTH)) {
            field = AuthMessages.SQE_LENGTH;
        }
        if (field >= 0) {
            req.errorLocation = field;
            return NvmeStatus.INVALID_FIELD;
        }
        req.handler = handler;
        req.xferDir = dir;
        req.expectedLength = (int) length;
        return NvmeStatus.SUCCESS;
    }

    private void executeSend(Request req) {
        Controller c = req.controller();
        c.touch(); // traffic: the keep-alive timer does not run out while the host authenticates
        AuthSession s = c.authSession(req.queue().qid(), req.queue());
        byte[] m = new byte[req.dataLength];
        req.data.getBytes(0, m);
        AuthSession.Work work = s.send(m);
        if (work == null) {
            sent(req, c, s);
        } else {
            AuthWork.run(req, work, () -> {
                work.finish();
                sent(req, c, s);
            });
        }
    }

    private static void sent(Request req, Controller c, AuthSession s) {
        req.complete(NvmeStatus.SUCCESS);
        failIfRefused(c, req.queue(), s);
    }

    private void executeReceive(Request req) {
        Controller c = req.controller();
        c.touch();
        AuthSession s = c.authSession(req.queue().qid(), req.queue());
        byte[] m = s.receive(req.dataLength);
        if (m == null) {
            req.fail(NvmeStatus.INTERNAL_ERROR, AuthMessages.SQE_LENGTH); // AL too small for the message, as nvmet
            return;
        }
        req.data.setBytes(0, m);
        req.complete(NvmeStatus.SUCCESS);
        failIfRefused(c, req.queue(), s);
    }

    /** After the response is on its way: a failed authentication ends the host's controller. */
    private static void failIfRefused(Controller c, Queue q, AuthSession s) {
        int failure = s.takeFailure();
        if (failure == 0) {
            return;
        }
        ControllerLog.authFailed(c.subsystem().nqn(), c.hostnqn(), q.peer(), q.listenerTransport(), c.cntlid(),
            q.qid(), s.failureDetail());
        c.observer().authFailed(c.subsystem().nqn(), AuthMessages.reason(failure));
        String reason = "authentication failed on qid " + q.qid() + ": " + s.failureDetail();
        if (q.qid() == 0) {
            c.destroy(reason);
        } else {
            // an I/O queue's Connect names a controller by cntlid, host NQN and host ID, none of them a secret:
            // its failure proves nothing about the admin queue's authenticated host, so only this queue ends
            q.disconnect(reason);
        }
    }
}
