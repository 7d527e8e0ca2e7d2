/*
 * librdmacm: event channels, CM ids, connection setup and teardown, events.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include "nvmf4j_rdma.h"

void nvmf4j_cm_layout(nvmf4j_emit_fn emit, void *ctx)
{
	emit(ctx, "cm_event.size", sizeof(struct nvmf4j_cm_event));
	emit(ctx, "cm_event.event", offsetof(struct nvmf4j_cm_event, event));
	emit(ctx, "cm_event.id", offsetof(struct nvmf4j_cm_event, id));
	emit(ctx, "cm_event.listen_id", offsetof(struct nvmf4j_cm_event, listen_id));
	emit(ctx, "cm_event.type", offsetof(struct nvmf4j_cm_event, type));
	emit(ctx, "cm_event.status", offsetof(struct nvmf4j_cm_event, status));
	emit(ctx, "cm_event.qp_num", offsetof(struct nvmf4j_cm_event, qp_num));
	emit(ctx, "cm_event.responder_resources", offsetof(struct nvmf4j_cm_event, responder_resources));
	emit(ctx, "cm_event.initiator_depth", offsetof(struct nvmf4j_cm_event, initiator_depth));
	emit(ctx, "cm_event.flow_control", offsetof(struct nvmf4j_cm_event, flow_control));
	emit(ctx, "cm_event.retry_count", offsetof(struct nvmf4j_cm_event, retry_count));
	emit(ctx, "cm_event.rnr_retry_count", offsetof(struct nvmf4j_cm_event, rnr_retry_count));
	emit(ctx, "cm_event.srq", offsetof(struct nvmf4j_cm_event, srq));
	emit(ctx, "cm_event.private_data_len", offsetof(struct nvmf4j_cm_event, private_data_len));
	emit(ctx, "cm_event.private_data", offsetof(struct nvmf4j_cm_event, private_data));
	emit(ctx, "cm_event.private_data_max", sizeof(((struct nvmf4j_cm_event *)0)->private_data));
	emit(ctx, "cm.ps_tcp", RDMA_PS_TCP);
	emit(ctx, "cm.event.ADDR_RESOLVED", RDMA_CM_EVENT_ADDR_RESOLVED);
	emit(ctx, "cm.event.ADDR_ERROR", RDMA_CM_EVENT_ADDR_ERROR);
	emit(ctx, "cm.event.ROUTE_RESOLVED", RDMA_CM_EVENT_ROUTE_RESOLVED);
	emit(ctx, "cm.event.ROUTE_ERROR", RDMA_CM_EVENT_ROUTE_ERROR);
	emit(ctx, "cm.event.CONNECT_REQUEST", RDMA_CM_EVENT_CONNECT_REQUEST);
	emit(ctx, "cm.event.CONNECT_RESPONSE", RDMA_CM_EVENT_CONNECT_RESPONSE);
	emit(ctx, "cm.event.CONNECT_ERROR", RDMA_CM_EVENT_CONNECT_ERROR);
	emit(ctx, "cm.event.UNREACHABLE", RDMA_CM_EVENT_UNREACHABLE);
	emit(ctx, "cm.event.REJECTED", RDMA_CM_EVENT_REJECTED);
	emit(ctx, "cm.event.ESTABLISHED", RDMA_CM_EVENT_ESTABLISHED);
	emit(ctx, "cm.event.DISCONNECTED", RDMA_CM_EVENT_DISCONNECTED);
	emit(ctx, "cm.event.DEVICE_REMOVAL", RDMA_CM_EVENT_DEVICE_REMOVAL);
	emit(ctx, "cm.event.MULTICAST_JOIN", RDMA_CM_EVENT_MULTICAST_JOIN);
	emit(ctx, "cm.event.MULTICAST_ERROR", RDMA_CM_EVENT_MULTICAST_ERROR);
	emit(ctx, "cm.event.ADDR_CHANGE", RDMA_CM_EVENT_ADDR_CHANGE);
	emit(ctx, "cm.event.TIMEWAIT_EXIT", RDMA_CM_EVENT_TIMEWAIT_EXIT);
}

/* Fills a sockaddr from a 4- or 16-byte address; returns its length or 0. */
static socklen_t to_sockaddr(JNIEnv *env, jbyteArray addr, jint port, jint scope_id, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	jsize n = addr ? (*env)->GetArrayLength(env, addr) : 0;
	if (port < 0 || port > 65535)
		return 0;
	if (n == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		(*env)->GetByteArrayRegion(env, addr, 0, 4, (jbyte *)&sin->sin_addr);
		return sizeof(*sin);
	}
	if (n == 16) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sin6->sin6_scope_id = (uint32_t)scope_id;
		(*env)->GetByteArrayRegion(env, addr, 0, 16, (jbyte *)&sin6->sin6_addr);
		return sizeof(*sin6);
	}
	return 0;
}

/* Copies private data (at most 255 bytes, the CM limit) into buf; returns its length or -1. */
static int private_data(JNIEnv *env, jbyteArray data, uint8_t *buf)
{
	if (!data)
		return 0;
	jsize n = (*env)->GetArrayLength(env, data);
	if (n > 255)
		return -1;
	(*env)->GetByteArrayRegion(env, data, 0, n, (jbyte *)buf);
	return n;
}

static jlong create_event_channel(JNIEnv *env, jclass cls, jboolean non_blocking)
{
	errno = 0;
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		return NEG_ERRNO();
	if (non_blocking) {
		int fl = fcntl(ch->fd, F_GETFL);
		if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			jint err = NEG_ERRNO();
			rdma_destroy_event_channel(ch);
			return err;
		}
	}
	return P2H(ch);
}

static jint event_channel_fd(JNIEnv *env, jclass cls, jlong ch)
{
	REQUIRE(ch);
	return H2P(struct rdma_event_channel, ch)->fd;
}

static jint destroy_event_channel(JNIEnv *env, jclass cls, jlong ch)
{
	REQUIRE(ch);
	rdma_destroy_event_channel(H2P(struct rdma_event_channel, ch));
	return 0;
}

static jlong create_id(JNIEnv *env, jclass cls, jlong ch, jint ps)
{
	REQUIRE(ch);
	struct rdma_cm_id *id = NULL;
	if (rdma_create_id(H2P(struct rdma_event_channel, ch), &id, NULL, (enum rdma_port_space)ps))
		return NEG_ERRNO();
	return P2H(id);
}

static jint migrate_id(JNIEnv *env, jclass cls, jlong id, jlong ch)
{
	REQUIRE(id && ch);
	return rdma_migrate_id(H2P(struct rdma_cm_id, id), H2P(struct rdma_event_channel, ch)) ? NEG_ERRNO() : 0;
}

static jint bind_addr(JNIEnv *env, jclass cls, jlong id, jbyteArray addr, jint port, jint scope_id)
{
	REQUIRE(id);
	struct sockaddr_storage ss;
	REQUIRE(to_sockaddr(env, addr, port, scope_id, &ss));
	return rdma_bind_addr(H2P(struct rdma_cm_id, id), (struct sockaddr *)&ss) ? NEG_ERRNO() : 0;
}

static jint resolve_addr(JNIEnv *env, jclass cls, jlong id, jbyteArray dst, jint port, jint scope_id, jint timeout_ms)
{
	REQUIRE(id);
	struct sockaddr_storage ss;
	REQUIRE(to_sockaddr(env, dst, port, scope_id, &ss));
	return rdma_resolve_addr(H2P(struct rdma_cm_id, id), NULL, (struct sockaddr *)&ss, timeout_ms) ? NEG_ERRNO() : 0;
}

static jint resolve_route(JNIEnv *env, jclass cls, jlong id, jint timeout_ms)
{
	REQUIRE(id);
	return rdma_resolve_route(H2P(struct rdma_cm_id, id), timeout_ms) ? NEG_ERRNO() : 0;
}

static jint listen_id(JNIEnv *env, jclass cls, jlong id, jint backlog)
{
	REQUIRE(id);
	return rdma_listen(H2P(struct rdma_cm_id, id), backlog) ? NEG_ERRNO() : 0;
}

static jint connect_id(JNIEnv *env, jclass cls, jlong id, jbyteArray data, jint responder_resources,
		       jint initiator_depth, jint retry_count, jint rnr_retry_count)
{
	REQUIRE(id);
	uint8_t buf[256];
	int len = private_data(env, data, buf);
	REQUIRE(len >= 0);
	struct rdma_conn_param p = { .private_data = len ? buf : NULL, .private_data_len = (uint8_t)len,
		.responder_resources = (uint8_t)responder_resources, .initiator_depth = (uint8_t)initiator_depth,
		.flow_control = 1, .retry_count = (uint8_t)retry_count, .rnr_retry_count = (uint8_t)rnr_retry_count };
	return rdma_connect(H2P(struct rdma_cm_id, id), &p) ? NEG_ERRNO() : 0;
}

static jint accept_id(JNIEnv *env, jclass cls, jlong id, jbyteArray data, jint responder_resources,
		      jint initiator_depth, jint rnr_retry_count)
{
	REQUIRE(id);
	uint8_t buf[256];
	int len = private_data(env, data, buf);
	REQUIRE(len >= 0);
	struct rdma_conn_param p = { .private_data = len ? buf : NULL, .private_data_len = (uint8_t)len,
		.responder_resources = (uint8_t)responder_resources, .initiator_depth = (uint8_t)initiator_depth,
		.flow_control = 1, .rnr_retry_count = (uint8_t)rnr_retry_count };
	return rdma_accept(H2P(struct rdma_cm_id, id), &p) ? NEG_ERRNO() : 0;
}

/* One QP transition with the attributes the CM computes for this id (rdma_init_qp_attr). */
static int cm_modify_qp(struct rdma_cm_id *cm, struct ibv_qp *qp, enum ibv_qp_state state,
			int responder_resources, int initiator_depth, int rnr_retry)
{
	struct ibv_qp_attr a;
	int mask = 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = state;
	if (rdma_init_qp_attr(cm, &a, &mask))
		return NEG_ERRNO();
	if (state == IBV_QPS_RTR) {
		/* as librdmacm: the rdma_ucm of old kernels sets RoCE-only mask bits on InfiniBand ports */
		struct ibv_port_attr port;
		if (!ibv_query_port(cm->verbs, cm->port_num, &port) && port.link_layer == IBV_LINK_LAYER_INFINIBAND)
			mask &= ~0xe00000;
		a.max_dest_rd_atomic = (uint8_t)responder_resources;
	} else if (state == IBV_QPS_RTS) {
		a.max_rd_atomic = (uint8_t)initiator_depth;
		a.rnr_retry = (uint8_t)rnr_retry;
		mask |= IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RNR_RETRY;
	}
	int rc = ibv_modify_qp(qp, &a, mask);
	return rc ? -rc : 0;
}

/*
 * rdma_accept on an id whose QP (made by rdma_create_qp, in INIT) this side moves to RTR and RTS
 * itself, so that it sets its own QP's RNR retry count: the IB CM gives the passive side's QP the
 * count of the host's REQ (7, retry for ever, from the Linux host), and the accept's rnr_retry_count
 * only reaches the host's QP. librdmacm moves a QP of the id during rdma_accept; the QP is detached
 * from the id for that call (rdma_accept then takes qp_num and srq from the parameters, the documented
 * way for a QP the caller manages) and attached again, so that rdma_destroy_qp frees it as before.
 */
static jint accept_rts(JNIEnv *env, jclass cls, jlong id, jbyteArray data, jint responder_resources,
		       jint initiator_depth, jint rnr_retry)
{
	REQUIRE(id && rnr_retry >= 0 && rnr_retry <= 7);
	struct rdma_cm_id *cm = H2P(struct rdma_cm_id, id);
	struct ibv_qp *qp = cm->qp;
	REQUIRE(qp);
	uint8_t buf[256];
	int len = private_data(env, data, buf);
	REQUIRE(len >= 0);
	int rc = cm_modify_qp(cm, qp, IBV_QPS_INIT, 0, 0, 0);
	if (!rc)
		rc = cm_modify_qp(cm, qp, IBV_QPS_RTR, responder_resources, 0, 0);
	if (!rc)
		rc = cm_modify_qp(cm, qp, IBV_QPS_RTS, 0, initiator_depth, rnr_retry);
	if (rc)
		return rc;
	struct rdma_conn_param p = { .private_data = len ? buf : NULL, .private_data_len = (uint8_t)len,
		.responder_resources = (uint8_t)responder_resources, .initiator_depth = (uint8_t)initiator_depth,
		.flow_control = 1, .rnr_retry_count = (uint8_t)rnr_retry, .srq = qp->srq != NULL,
		.qp_num = qp->qp_num };
	cm->qp = NULL;
	rc = rdma_accept(cm, &p) ? NEG_ERRNO() : 0;
	cm->qp = qp;
	return rc;
}

static jint reject_id(JNIEnv *env, jclass cls, jlong id, jbyteArray data)
{
	REQUIRE(id);
	uint8_t buf[256];
	int len = private_data(env, data, buf);
	REQUIRE(len >= 0);
	return rdma_reject(H2P(struct rdma_cm_id, id), len ? buf : NULL, (uint8_t)len) ? NEG_ERRNO() : 0;
}

static jint disconnect_id(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	return rdma_disconnect(H2P(struct rdma_cm_id, id)) ? NEG_ERRNO() : 0;
}

static jint destroy_id(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	return rdma_destroy_id(H2P(struct rdma_cm_id, id)) ? NEG_ERRNO() : 0;
}

/*
 * Takes the next event off the channel (blocking unless the channel is
 * non-blocking: then -EAGAIN) and copies it into slot `index` of a CM event
 * array. The event stays owned by librdmacm until ackCmEvent.
 */
static jint get_cm_event(JNIEnv *env, jclass cls, jlong ch, jlong events, jint index)
{
	struct nvmf4j_array_hdr *h = nvmf4j_array(events, NVMF4J_ARRAY_CM_EVENT);
	REQUIRE(ch && h && index >= 0 && index < h->capacity);
	struct rdma_cm_event *ev = NULL;
	if (rdma_get_cm_event(H2P(struct rdma_event_channel, ch), &ev))
		return NEG_ERRNO();
	struct nvmf4j_cm_event *out = (struct nvmf4j_cm_event *)nvmf4j_array_data(h) + index;
	const struct rdma_conn_param *c = &ev->param.conn;
	out->event = P2H(ev);
	out->id = P2H(ev->id);
	out->listen_id = P2H(ev->listen_id);
	out->type = ev->event;
	out->status = ev->status;
	out->qp_num = c->qp_num;
	out->responder_resources = c->responder_resources;
	out->initiator_depth = c->initiator_depth;
	out->flow_control = c->flow_control;
	out->retry_count = c->retry_count;
	out->rnr_retry_count = c->rnr_retry_count;
	out->srq = c->srq;
	out->private_data_len = c->private_data ? c->private_data_len : 0;
	if (out->private_data_len)
		memcpy(out->private_data, c->private_data, out->private_data_len);
	return 0;
}

static jint ack_cm_event(JNIEnv *env, jclass cls, jlong ev)
{
	REQUIRE(ev);
	return rdma_ack_cm_event(H2P(struct rdma_cm_event, ev)) ? NEG_ERRNO() : 0;
}

static jlong cm_id_context(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	return P2H(H2P(struct rdma_cm_id, id)->verbs);
}

static jint cm_id_port_num(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	return H2P(struct rdma_cm_id, id)->port_num;
}

static jlong cm_id_qp(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	return P2H(H2P(struct rdma_cm_id, id)->qp);
}

/* "a.b.c.d:port" or "[v6]:port" of the local or peer address; null for a bad id. */
static jstring cm_id_address(JNIEnv *env, jclass cls, jlong id, jboolean peer)
{
	if (!id)
		return NULL;
	struct rdma_cm_id *cm = H2P(struct rdma_cm_id, id);
	struct sockaddr *sa = peer ? rdma_get_peer_addr(cm) : rdma_get_local_addr(cm);
	char host[INET6_ADDRSTRLEN] = "?", out[INET6_ADDRSTRLEN + 16];
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(out, sizeof(out), "%s:%u", host, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(out, sizeof(out), "[%s]:%u", host, ntohs(sin6->sin6_port));
	} else {
		snprintf(out, sizeof(out), "unbound");
	}
	return (*env)->NewStringUTF(env, out);
}

static jstring event_name(JNIEnv *env, jclass cls, jint type)
{
	return (*env)->NewStringUTF(env, rdma_event_str((enum rdma_cm_event_type)type));
}

const JNINativeMethod nvmf4j_cm_methods[] = {
	{ "createEventChannel", "(Z)J", (void *)create_event_channel },
	{ "eventChannelFd", "(J)I", (void *)event_channel_fd },
	{ "destroyEventChannel", "(J)I", (void *)destroy_event_channel },
	{ "createId", "(JI)J", (void *)create_id },
	{ "migrateId", "(JJ)I", (void *)migrate_id },
	{ "bindAddr", "(J[BII)I", (void *)bind_addr },
	{ "resolveAddr", "(J[BIII)I", (void *)resolve_addr },
	{ "resolveRoute", "(JI)I", (void *)resolve_route },
	{ "listen", "(JI)I", (void *)listen_id },
	{ "connect", "(J[BIIII)I", (void *)connect_id },
	{ "accept", "(J[BIII)I", (void *)accept_id },
	{ "acceptRts", "(J[BIII)I", (void *)accept_rts },
	{ "reject", "(J[B)I", (void *)reject_id },
	{ "disconnect", "(J)I", (void *)disconnect_id },
	{ "destroyId", "(J)I", (void *)destroy_id },
	{ "getCmEvent", "(JJI)I", (void *)get_cm_event },
	{ "ackCmEvent", "(J)I", (void *)ack_cm_event },
	{ "cmIdContext", "(J)J", (void *)cm_id_context },
	{ "cmIdPortNum", "(J)I", (void *)cm_id_port_num },
	{ "cmIdQp", "(J)J", (void *)cm_id_qp },
	{ "cmIdAddress", "(JZ)Ljava/lang/String;", (void *)cm_id_address },
	{ "eventName", "(I)Ljava/lang/String;", (void *)event_name },
};
const int nvmf4j_cm_method_count = sizeof(nvmf4j_cm_methods) / sizeof(nvmf4j_cm_methods[0]);
