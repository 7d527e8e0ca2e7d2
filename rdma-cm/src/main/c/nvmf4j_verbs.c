/*
 * libibverbs: device/port attributes, PD, MR, completion channel, CQ, SRQ,
 * QP on a CM id, and the hot path (post send / recv / srq recv, poll, arm).
 */
#include <string.h>
#include "nvmf4j_rdma.h"

/* Attribute arrays filled by queryDevice / queryPort / createQp; Java reads the indexes from the layout. */
#define DEVICE_ATTRS(X) \
	X(max_mr_size) X(page_size_cap) X(vendor_id) X(vendor_part_id) X(hw_ver) X(max_qp) X(max_qp_wr) \
	X(device_cap_flags) X(max_sge) X(max_sge_rd) X(max_cq) X(max_cqe) X(max_mr) X(max_pd) \
	X(max_qp_rd_atom) X(max_res_rd_atom) X(max_qp_init_rd_atom) X(atomic_cap) X(max_mw) X(max_srq) \
	X(max_srq_wr) X(max_srq_sge) X(local_ca_ack_delay) X(phys_port_cnt)
#define PORT_ATTRS(X) \
	X(state) X(max_mtu) X(active_mtu) X(gid_tbl_len) X(port_cap_flags) X(max_msg_sz) X(lid) \
	X(active_width) X(active_speed) X(phys_state) X(link_layer)
#define QP_CAPS(X) X(max_send_wr) X(max_recv_wr) X(max_send_sge) X(max_recv_sge) X(max_inline_data)

#define ENUM_DEVICE(f) DEV_##f,
#define ENUM_PORT(f) PORT_##f,
#define ENUM_CAP(f) CAP_##f,
enum { DEVICE_ATTRS(ENUM_DEVICE) DEVICE_ATTR_COUNT };
enum { PORT_ATTRS(ENUM_PORT) PORT_ATTR_COUNT };
enum { QP_CAPS(ENUM_CAP) QP_CAP_COUNT };

#define EMIT_OFF(prefix, type, field) emit(ctx, prefix "." #field, offsetof(type, field))
#define EMIT_CONST(key, value) emit(ctx, key, value)

void nvmf4j_verbs_layout(nvmf4j_emit_fn emit, void *ctx)
{
#define EMIT_DEVICE(f) emit(ctx, "device." #f, DEV_##f);
#define EMIT_PORT(f) emit(ctx, "port." #f, PORT_##f);
#define EMIT_CAP(f) emit(ctx, "qp_caps." #f, CAP_##f);
	DEVICE_ATTRS(EMIT_DEVICE)
	PORT_ATTRS(EMIT_PORT)
	QP_CAPS(EMIT_CAP)
	emit(ctx, "device.count", DEVICE_ATTR_COUNT);
	emit(ctx, "port.count", PORT_ATTR_COUNT);
	emit(ctx, "qp_caps.count", QP_CAP_COUNT);

	emit(ctx, "send_wr.size", sizeof(struct ibv_send_wr));
	EMIT_OFF("send_wr", struct ibv_send_wr, wr_id);
	EMIT_OFF("send_wr", struct ibv_send_wr, next);
	EMIT_OFF("send_wr", struct ibv_send_wr, sg_list);
	EMIT_OFF("send_wr", struct ibv_send_wr, num_sge);
	EMIT_OFF("send_wr", struct ibv_send_wr, opcode);
	EMIT_OFF("send_wr", struct ibv_send_wr, send_flags);
	EMIT_OFF("send_wr", struct ibv_send_wr, imm_data);
	EMIT_OFF("send_wr", struct ibv_send_wr, invalidate_rkey);
	EMIT_OFF("send_wr", struct ibv_send_wr, wr.rdma.remote_addr);
	EMIT_OFF("send_wr", struct ibv_send_wr, wr.rdma.rkey);
	emit(ctx, "recv_wr.size", sizeof(struct ibv_recv_wr));
	EMIT_OFF("recv_wr", struct ibv_recv_wr, wr_id);
	EMIT_OFF("recv_wr", struct ibv_recv_wr, next);
	EMIT_OFF("recv_wr", struct ibv_recv_wr, sg_list);
	EMIT_OFF("recv_wr", struct ibv_recv_wr, num_sge);
	emit(ctx, "sge.size", sizeof(struct ibv_sge));
	EMIT_OFF("sge", struct ibv_sge, addr);
	EMIT_OFF("sge", struct ibv_sge, length);
	EMIT_OFF("sge", struct ibv_sge, lkey);
	emit(ctx, "wc.size", sizeof(struct ibv_wc));
	EMIT_OFF("wc", struct ibv_wc, wr_id);
	EMIT_OFF("wc", struct ibv_wc, status);
	EMIT_OFF("wc", struct ibv_wc, opcode);
	EMIT_OFF("wc", struct ibv_wc, vendor_err);
	EMIT_OFF("wc", struct ibv_wc, byte_len);
	EMIT_OFF("wc", struct ibv_wc, imm_data);
	EMIT_OFF("wc", struct ibv_wc, invalidated_rkey);
	EMIT_OFF("wc", struct ibv_wc, qp_num);
	EMIT_OFF("wc", struct ibv_wc, src_qp);
	EMIT_OFF("wc", struct ibv_wc, wc_flags);

	EMIT_CONST("wr.RDMA_WRITE", IBV_WR_RDMA_WRITE);
	EMIT_CONST("wr.RDMA_WRITE_WITH_IMM", IBV_WR_RDMA_WRITE_WITH_IMM);
	EMIT_CONST("wr.SEND", IBV_WR_SEND);
	EMIT_CONST("wr.SEND_WITH_IMM", IBV_WR_SEND_WITH_IMM);
	EMIT_CONST("wr.RDMA_READ", IBV_WR_RDMA_READ);
	EMIT_CONST("wr.SEND_WITH_INV", IBV_WR_SEND_WITH_INV);
	EMIT_CONST("wr.LOCAL_INV", IBV_WR_LOCAL_INV);
	EMIT_CONST("send.FENCE", IBV_SEND_FENCE);
	EMIT_CONST("send.SIGNALED", IBV_SEND_SIGNALED);
	EMIT_CONST("send.SOLICITED", IBV_SEND_SOLICITED);
	EMIT_CONST("send.INLINE", IBV_SEND_INLINE);
	EMIT_CONST("wc.SEND", IBV_WC_SEND);
	EMIT_CONST("wc.RDMA_WRITE", IBV_WC_RDMA_WRITE);
	EMIT_CONST("wc.RDMA_READ", IBV_WC_RDMA_READ);
	EMIT_CONST("wc.LOCAL_INV", IBV_WC_LOCAL_INV);
	EMIT_CONST("wc.RECV", IBV_WC_RECV);
	EMIT_CONST("wc.RECV_RDMA_WITH_IMM", IBV_WC_RECV_RDMA_WITH_IMM);
	EMIT_CONST("wc.status.SUCCESS", IBV_WC_SUCCESS);
	EMIT_CONST("wc.status.LOC_LEN_ERR", IBV_WC_LOC_LEN_ERR);
	EMIT_CONST("wc.status.LOC_PROT_ERR", IBV_WC_LOC_PROT_ERR);
	EMIT_CONST("wc.status.WR_FLUSH_ERR", IBV_WC_WR_FLUSH_ERR);
	EMIT_CONST("wc.status.REM_INV_REQ_ERR", IBV_WC_REM_INV_REQ_ERR);
	EMIT_CONST("wc.status.REM_ACCESS_ERR", IBV_WC_REM_ACCESS_ERR);
	EMIT_CONST("wc.status.REM_OP_ERR", IBV_WC_REM_OP_ERR);
	EMIT_CONST("wc.status.RETRY_EXC_ERR", IBV_WC_RETRY_EXC_ERR);
	EMIT_CONST("wc.status.RNR_RETRY_EXC_ERR", IBV_WC_RNR_RETRY_EXC_ERR);
	EMIT_CONST("wc.flag.WITH_IMM", IBV_WC_WITH_IMM);
	EMIT_CONST("wc.flag.WITH_INV", IBV_WC_WITH_INV);
	EMIT_CONST("access.LOCAL_WRITE", IBV_ACCESS_LOCAL_WRITE);
	EMIT_CONST("access.REMOTE_WRITE", IBV_ACCESS_REMOTE_WRITE);
	EMIT_CONST("access.REMOTE_READ", IBV_ACCESS_REMOTE_READ);
	EMIT_CONST("access.REMOTE_ATOMIC", IBV_ACCESS_REMOTE_ATOMIC);
	EMIT_CONST("access.MW_BIND", IBV_ACCESS_MW_BIND);
	EMIT_CONST("device.cap.RC_RNR_NAK_GEN", IBV_DEVICE_RC_RNR_NAK_GEN);
	EMIT_CONST("device.cap.SRQ_RESIZE", IBV_DEVICE_SRQ_RESIZE);
	EMIT_CONST("device.cap.MEM_WINDOW", IBV_DEVICE_MEM_WINDOW);
	EMIT_CONST("device.cap.MEM_MGT_EXTENSIONS", IBV_DEVICE_MEM_MGT_EXTENSIONS);
	EMIT_CONST("device.cap.MEM_WINDOW_TYPE_2A", IBV_DEVICE_MEM_WINDOW_TYPE_2A);
	EMIT_CONST("device.cap.MEM_WINDOW_TYPE_2B", IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	EMIT_CONST("device.cap.XRC", IBV_DEVICE_XRC);
	EMIT_CONST("port.state.DOWN", IBV_PORT_DOWN);
	EMIT_CONST("port.state.ACTIVE", IBV_PORT_ACTIVE);
	EMIT_CONST("port.link_layer.INFINIBAND", IBV_LINK_LAYER_INFINIBAND);
	EMIT_CONST("port.link_layer.ETHERNET", IBV_LINK_LAYER_ETHERNET);
	EMIT_CONST("transport.IB", IBV_TRANSPORT_IB);
	EMIT_CONST("transport.IWARP", IBV_TRANSPORT_IWARP);
	EMIT_CONST("async.CQ_ERR", IBV_EVENT_CQ_ERR);
	EMIT_CONST("async.QP_FATAL", IBV_EVENT_QP_FATAL);
	EMIT_CONST("async.QP_REQ_ERR", IBV_EVENT_QP_REQ_ERR);
	EMIT_CONST("async.QP_ACCESS_ERR", IBV_EVENT_QP_ACCESS_ERR);
	EMIT_CONST("async.COMM_EST", IBV_EVENT_COMM_EST);
	EMIT_CONST("async.SQ_DRAINED", IBV_EVENT_SQ_DRAINED);
	EMIT_CONST("async.PATH_MIG", IBV_EVENT_PATH_MIG);
	EMIT_CONST("async.PATH_MIG_ERR", IBV_EVENT_PATH_MIG_ERR);
	EMIT_CONST("async.DEVICE_FATAL", IBV_EVENT_DEVICE_FATAL);
	EMIT_CONST("async.PORT_ACTIVE", IBV_EVENT_PORT_ACTIVE);
	EMIT_CONST("async.PORT_ERR", IBV_EVENT_PORT_ERR);
	EMIT_CONST("async.LID_CHANGE", IBV_EVENT_LID_CHANGE);
	EMIT_CONST("async.PKEY_CHANGE", IBV_EVENT_PKEY_CHANGE);
	EMIT_CONST("async.SM_CHANGE", IBV_EVENT_SM_CHANGE);
	EMIT_CONST("async.SRQ_ERR", IBV_EVENT_SRQ_ERR);
	EMIT_CONST("async.SRQ_LIMIT_REACHED", IBV_EVENT_SRQ_LIMIT_REACHED);
	EMIT_CONST("async.QP_LAST_WQE_REACHED", IBV_EVENT_QP_LAST_WQE_REACHED);
	EMIT_CONST("async.CLIENT_REREGISTER", IBV_EVENT_CLIENT_REREGISTER);
	EMIT_CONST("async.GID_CHANGE", IBV_EVENT_GID_CHANGE);
}

/* ---- attributes (control plane) ---- */

static jint query_device(JNIEnv *env, jclass cls, jlong ctx, jlongArray out)
{
	REQUIRE(ctx && out && (*env)->GetArrayLength(env, out) >= DEVICE_ATTR_COUNT);
	struct ibv_device_attr a;
	int rc = ibv_query_device(H2P(struct ibv_context, ctx), &a);
	if (rc)
		return -rc;
	jlong v[DEVICE_ATTR_COUNT];
#define FILL_DEVICE(f) v[DEV_##f] = (jlong)a.f;
	DEVICE_ATTRS(FILL_DEVICE)
	(*env)->SetLongArrayRegion(env, out, 0, DEVICE_ATTR_COUNT, v);
	return 0;
}

static jint query_port(JNIEnv *env, jclass cls, jlong ctx, jint port, jlongArray out)
{
	REQUIRE(ctx && port > 0 && port < 256 && out && (*env)->GetArrayLength(env, out) >= PORT_ATTR_COUNT);
	struct ibv_port_attr a;
	int rc = ibv_query_port(H2P(struct ibv_context, ctx), (uint8_t)port, &a);
	if (rc)
		return -rc;
	jlong v[PORT_ATTR_COUNT];
#define FILL_PORT(f) v[PORT_##f] = (jlong)a.f;
	PORT_ATTRS(FILL_PORT)
	(*env)->SetLongArrayRegion(env, out, 0, PORT_ATTR_COUNT, v);
	return 0;
}

/* The device's transport (IBV_TRANSPORT_IB for InfiniBand and RoCE, IBV_TRANSPORT_IWARP, ...). */
static jint device_transport(JNIEnv *env, jclass cls, jlong ctx)
{
	struct ibv_context *c = H2P(struct ibv_context, ctx);
	REQUIRE(c && c->device);
	return (jint)c->device->transport_type;
}

/* ---- asynchronous events ---- */

/* The device's async event fd (for epoll; make it non-blocking with setNonBlocking). */
static jint async_fd(JNIEnv *env, jclass cls, jlong ctx)
{
	REQUIRE(ctx);
	return H2P(struct ibv_context, ctx)->async_fd;
}

/*
 * Takes the next asynchronous event of the device (-EAGAIN when none and the fd
 * is non-blocking), copies what Java needs into out[0..2] (type; the QP, CQ or
 * SRQ handle, or the port number; the QP number for QP events) and acks it at
 * once: ibv_destroy_qp/cq/srq wait until every event of their object is acked,
 * so an event held across a Java call could block a teardown for good.
 */
static jint get_async_event(JNIEnv *env, jclass cls, jlong ctx, jlongArray out)
{
	REQUIRE(ctx && out && (*env)->GetArrayLength(env, out) >= 3);
	struct ibv_async_event ev;
	if (ibv_get_async_event(H2P(struct ibv_context, ctx), &ev))
		return NEG_ERRNO();
	jlong v[3] = { ev.event_type, 0, 0 };
	switch (ev.event_type) {
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST: case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		v[1] = P2H(ev.element.qp);
		v[2] = ev.element.qp ? ev.element.qp->qp_num : 0;
		break;
	case IBV_EVENT_CQ_ERR:
		v[1] = P2H(ev.element.cq);
		break;
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		v[1] = P2H(ev.element.srq);
		break;
	default:
		v[1] = ev.element.port_num;
		break;
	}
	ibv_ack_async_event(&ev);
	(*env)->SetLongArrayRegion(env, out, 0, 3, v);
	return 0;
}

static jstring async_event_name(JNIEnv *env, jclass cls, jint type)
{
	return (*env)->NewStringUTF(env, ibv_event_type_str((enum ibv_event_type)type));
}

/* ---- PD, MR ---- */

static jlong alloc_pd(JNIEnv *env, jclass cls, jlong ctx)
{
	REQUIRE(ctx);
	errno = 0;
	struct ibv_pd *pd = ibv_alloc_pd(H2P(struct ibv_context, ctx));
	return pd ? P2H(pd) : NEG_ERRNO();
}

static jint dealloc_pd(JNIEnv *env, jclass cls, jlong pd)
{
	REQUIRE(pd);
	return -ibv_dealloc_pd(H2P(struct ibv_pd, pd));
}

static jlong reg_mr(JNIEnv *env, jclass cls, jlong pd, jlong addr, jlong length, jint access)
{
	REQUIRE(pd && addr && length > 0);
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(H2P(struct ibv_pd, pd), H2P(void, addr), (size_t)length, access);
	return mr ? P2H(mr) : NEG_ERRNO();
}

static jint dereg_mr(JNIEnv *env, jclass cls, jlong mr)
{
	REQUIRE(mr);
	return -ibv_dereg_mr(H2P(struct ibv_mr, mr));
}

static jint mr_lkey(JNIEnv *env, jclass cls, jlong mr)
{
	return mr ? (jint)H2P(struct ibv_mr, mr)->lkey : 0;
}

static jint mr_rkey(JNIEnv *env, jclass cls, jlong mr)
{
	return mr ? (jint)H2P(struct ibv_mr, mr)->rkey : 0;
}

/* ---- completion channel, CQ ---- */

static jlong create_comp_channel(JNIEnv *env, jclass cls, jlong ctx)
{
	REQUIRE(ctx);
	errno = 0;
	struct ibv_comp_channel *ch = ibv_create_comp_channel(H2P(struct ibv_context, ctx));
	return ch ? P2H(ch) : NEG_ERRNO();
}

static jint destroy_comp_channel(JNIEnv *env, jclass cls, jlong ch)
{
	REQUIRE(ch);
	return ibv_destroy_comp_channel(H2P(struct ibv_comp_channel, ch)) ? NEG_ERRNO() : 0;
}

static jint comp_channel_fd(JNIEnv *env, jclass cls, jlong ch)
{
	REQUIRE(ch);
	return H2P(struct ibv_comp_channel, ch)->fd;
}

static jlong create_cq(JNIEnv *env, jclass cls, jlong ctx, jint cqe, jlong ch, jint comp_vector)
{
	REQUIRE(ctx && cqe > 0);
	errno = 0;
	struct ibv_cq *cq = ibv_create_cq(H2P(struct ibv_context, ctx), cqe, NULL,
					  H2P(struct ibv_comp_channel, ch), comp_vector);
	return cq ? P2H(cq) : NEG_ERRNO();
}

static jint destroy_cq(JNIEnv *env, jclass cls, jlong cq)
{
	REQUIRE(cq);
	return -ibv_destroy_cq(H2P(struct ibv_cq, cq));
}

static jint req_notify_cq(JNIEnv *env, jclass cls, jlong cq, jboolean solicited_only)
{
	REQUIRE(cq);
	return -ibv_req_notify_cq(H2P(struct ibv_cq, cq), solicited_only ? 1 : 0);
}

/* Blocks (unless the channel fd is non-blocking: -EAGAIN) until an armed CQ fires; returns that CQ. */
static jlong get_cq_event(JNIEnv *env, jclass cls, jlong ch)
{
	REQUIRE(ch);
	struct ibv_cq *cq = NULL;
	void *cq_ctx = NULL;
	if (ibv_get_cq_event(H2P(struct ibv_comp_channel, ch), &cq, &cq_ctx))
		return NEG_ERRNO();
	return P2H(cq);
}

static jint ack_cq_events(JNIEnv *env, jclass cls, jlong cq, jint n)
{
	REQUIRE(cq && n >= 0);
	ibv_ack_cq_events(H2P(struct ibv_cq, cq), (unsigned int)n);
	return 0;
}

/* Polls up to max completions into entries [0, max) of a completion array; returns how many, or -EIO. */
static jint poll_cq(JNIEnv *env, jclass cls, jlong cq, jlong wcs, jint max)
{
	struct nvmf4j_array_hdr *h = nvmf4j_array(wcs, NVMF4J_ARRAY_WC);
	REQUIRE(cq && h && max >= 0 && max <= h->capacity);
	int n = ibv_poll_cq(H2P(struct ibv_cq, cq), max, nvmf4j_array_data(h));
	return n < 0 ? -EIO : n;
}

/* ---- SRQ, QP ---- */

static jlong create_srq(JNIEnv *env, jclass cls, jlong pd, jint max_wr, jint max_sge, jint limit)
{
	REQUIRE(pd && max_wr > 0 && max_sge > 0 && limit >= 0);
	struct ibv_srq_init_attr a = { .attr = { .max_wr = (uint32_t)max_wr, .max_sge = (uint32_t)max_sge,
						 .srq_limit = (uint32_t)limit } };
	errno = 0;
	struct ibv_srq *srq = ibv_create_srq(H2P(struct ibv_pd, pd), &a);
	return srq ? P2H(srq) : NEG_ERRNO();
}

static jint destroy_srq(JNIEnv *env, jclass cls, jlong srq)
{
	REQUIRE(srq);
	return -ibv_destroy_srq(H2P(struct ibv_srq, srq));
}

/* rdma_create_qp: an RC QP on the CM id; caps_out receives the granted capabilities. */
static jlong create_qp(JNIEnv *env, jclass cls, jlong id, jlong pd, jlong send_cq, jlong recv_cq, jlong srq,
		       jint max_send_wr, jint max_recv_wr, jint max_send_sge, jint max_recv_sge, jint max_inline,
		       jboolean sig_all, jintArray caps_out)
{
	REQUIRE(id && pd && send_cq && recv_cq && max_send_wr > 0 && max_send_sge > 0 && max_inline >= 0);
	REQUIRE(srq || (max_recv_wr > 0 && max_recv_sge > 0));
	REQUIRE(!caps_out || (*env)->GetArrayLength(env, caps_out) >= QP_CAP_COUNT);
	struct ibv_qp_init_attr a = {
		.send_cq = H2P(struct ibv_cq, send_cq), .recv_cq = H2P(struct ibv_cq, recv_cq),
		.srq = H2P(struct ibv_srq, srq), .qp_type = IBV_QPT_RC, .sq_sig_all = sig_all ? 1 : 0,
		.cap = { .max_send_wr = (uint32_t)max_send_wr, .max_recv_wr = srq ? 0 : (uint32_t)max_recv_wr,
			 .max_send_sge = (uint32_t)max_send_sge, .max_recv_sge = srq ? 0 : (uint32_t)max_recv_sge,
			 .max_inline_data = (uint32_t)max_inline } };
	struct rdma_cm_id *cm = H2P(struct rdma_cm_id, id);
	if (rdma_create_qp(cm, H2P(struct ibv_pd, pd), &a))
		return NEG_ERRNO();
	if (caps_out) {
		jint v[QP_CAP_COUNT];
#define FILL_CAP(f) v[CAP_##f] = (jint)a.cap.f;
		QP_CAPS(FILL_CAP)
		(*env)->SetIntArrayRegion(env, caps_out, 0, QP_CAP_COUNT, v);
	}
	return P2H(cm->qp);
}

/*
 * Destroys the QP of a CM id, if it has one: rdma_destroy_qp passes id->qp to ibv_destroy_qp, which
 * dereferences it, so an id whose QP was never created (or was destroyed already) is left alone. A
 * cleanup path can therefore call this whatever step failed.
 */
static jint destroy_qp(JNIEnv *env, jclass cls, jlong id)
{
	REQUIRE(id);
	struct rdma_cm_id *cm = H2P(struct rdma_cm_id, id);
	if (cm->qp)
		rdma_destroy_qp(cm);
	return 0;
}

static jint qp_num(JNIEnv *env, jclass cls, jlong qp)
{
	REQUIRE(qp);
	return (jint)H2P(struct ibv_qp, qp)->qp_num;
}

/* Moves the QP to the error state: outstanding WRs complete with WR_FLUSH_ERR. */
static jint qp_to_error(JNIEnv *env, jclass cls, jlong qp)
{
	REQUIRE(qp);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	return -ibv_modify_qp(H2P(struct ibv_qp, qp), &a, IBV_QP_STATE);
}

/* ---- hot path: post a range of preallocated work requests as one chain ---- */

static jint post_send(JNIEnv *env, jclass cls, jlong qp, jlong wrs, jint first, jint count)
{
	struct nvmf4j_array_hdr *h = nvmf4j_array(wrs, NVMF4J_ARRAY_SEND_WR);
	REQUIRE(qp && h && first >= 0 && count >= 0 && count <= h->capacity - first);
	if (!count)
		return 0;
	struct ibv_send_wr *wr = nvmf4j_array_data(h), *bad = NULL;
	struct ibv_sge *sges = (struct ibv_sge *)(wr + h->capacity);
	int last = first + count - 1;
	for (int i = first; i <= last; i++) {
		if (wr[i].num_sge < 0 || wr[i].num_sge > h->max_sge)
			return -EINVAL;
		wr[i].sg_list = sges + (size_t)i * h->max_sge;
		wr[i].next = i < last ? &wr[i + 1] : NULL;
	}
	int rc = ibv_post_send(H2P(struct ibv_qp, qp), &wr[first], &bad);
	h->bad_index = rc ? (bad ? (int32_t)(bad - wr) : first) : -1;
	return rc ? -rc : count;
}

static int chain_recv(struct nvmf4j_array_hdr *h, int first, int last)
{
	struct ibv_recv_wr *wr = nvmf4j_array_data(h);
	struct ibv_sge *sges = (struct ibv_sge *)(wr + h->capacity);
	for (int i = first; i <= last; i++) {
		if (wr[i].num_sge < 0 || wr[i].num_sge > h->max_sge)
			return -EINVAL;
		wr[i].sg_list = sges + (size_t)i * h->max_sge;
		wr[i].next = i < last ? &wr[i + 1] : NULL;
	}
	return 0;
}

static jint post_recv(JNIEnv *env, jclass cls, jlong qp, jlong wrs, jint first, jint count)
{
	struct nvmf4j_array_hdr *h = nvmf4j_array(wrs, NVMF4J_ARRAY_RECV_WR);
	REQUIRE(qp && h && first >= 0 && count >= 0 && count <= h->capacity - first);
	if (!count)
		return 0;
	if (chain_recv(h, first, first + count - 1))
		return -EINVAL;
	struct ibv_recv_wr *wr = nvmf4j_array_data(h), *bad = NULL;
	int rc = ibv_post_recv(H2P(struct ibv_qp, qp), &wr[first], &bad);
	h->bad_index = rc ? (bad ? (int32_t)(bad - wr) : first) : -1;
	return rc ? -rc : count;
}

static jint post_srq_recv(JNIEnv *env, jclass cls, jlong srq, jlong wrs, jint first, jint count)
{
	struct nvmf4j_array_hdr *h = nvmf4j_array(wrs, NVMF4J_ARRAY_RECV_WR);
	REQUIRE(srq && h && first >= 0 && count >= 0 && count <= h->capacity - first);
	if (!count)
		return 0;
	if (chain_recv(h, first, first + count - 1))
		return -EINVAL;
	struct ibv_recv_wr *wr = nvmf4j_array_data(h), *bad = NULL;
	int rc = ibv_post_srq_recv(H2P(struct ibv_srq, srq), &wr[first], &bad);
	h->bad_index = rc ? (bad ? (int32_t)(bad - wr) : first) : -1;
	return rc ? -rc : count;
}

static jstring wc_status_name(JNIEnv *env, jclass cls, jint status)
{
	return (*env)->NewStringUTF(env, ibv_wc_status_str((enum ibv_wc_status)status));
}

const JNINativeMethod nvmf4j_verbs_methods[] = {
	{ "queryDevice", "(J[J)I", (void *)query_device },
	{ "queryPort", "(JI[J)I", (void *)query_port },
	{ "allocPd", "(J)J", (void *)alloc_pd },
	{ "deallocPd", "(J)I", (void *)dealloc_pd },
	{ "regMr", "(JJJI)J", (void *)reg_mr },
	{ "deregMr", "(J)I", (void *)dereg_mr },
	{ "mrLkey", "(J)I", (void *)mr_lkey },
	{ "mrRkey", "(J)I", (void *)mr_rkey },
	{ "createCompChannel", "(J)J", (void *)create_comp_channel },
	{ "destroyCompChannel", "(J)I", (void *)destroy_comp_channel },
	{ "compChannelFd", "(J)I", (void *)comp_channel_fd },
	{ "createCq", "(JIJI)J", (void *)create_cq },
	{ "destroyCq", "(J)I", (void *)destroy_cq },
	{ "reqNotifyCq", "(JZ)I", (void *)req_notify_cq },
	{ "getCqEvent", "(J)J", (void *)get_cq_event },
	{ "ackCqEvents", "(JI)I", (void *)ack_cq_events },
	{ "pollCq", "(JJI)I", (void *)poll_cq },
	{ "createSrq", "(JIII)J", (void *)create_srq },
	{ "destroySrq", "(J)I", (void *)destroy_srq },
	{ "createQp", "(JJJJJIIIIIZ[I)J", (void *)create_qp },
	{ "destroyQp", "(J)I", (void *)destroy_qp },
	{ "qpNum", "(J)I", (void *)qp_num },
	{ "qpToError", "(J)I", (void *)qp_to_error },
	{ "postSend", "(JJII)I", (void *)post_send },
	{ "postRecv", "(JJII)I", (void *)post_recv },
	{ "postSrqRecv", "(JJII)I", (void *)post_srq_recv },
	{ "wcStatusName", "(I)Ljava/lang/String;", (void *)wc_status_name },
	{ "deviceTransport", "(J)I", (void *)device_transport },
	{ "asyncFd", "(J)I", (void *)async_fd },
	{ "getAsyncEvent", "(J[J)I", (void *)get_async_event },
	{ "asyncEventName", "(I)Ljava/lang/String;", (void *)async_event_name },
};
const int nvmf4j_verbs_method_count = sizeof(nvmf4j_verbs_methods) / sizeof(nvmf4j_verbs_methods[0]);
