// notif-inbox-server/proxy, the package's second entry point: the browser-safe gateway a host app
// mounts on its own domain (proxy/index.ts; the allow-list, the subscriber's authentication, the
// redaction and the Node adapter beside it in proxy/).
export { createInboxProxy, PROXY_MAX_BODY_BYTES, PROXY_MAX_IN_FLIGHT, PROXY_RATE_LIMIT, PROXY_WRITE_TIMEOUT_MS, subscriberHash, toNodeListener, type InboxProxyOptions } from './proxy/index.ts';
