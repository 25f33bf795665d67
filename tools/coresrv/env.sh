# Fixed test credentials of the reference core API server (tools/coresrv/README.md).
# tests/stack/stack.sh appends this file to DIR/env. Test values only: never real secrets.
export RD_CORE_LOGIN='ops'
export RD_CORE_PASSWORD='redrive-ops-password'
export RD_CORE_VIEWER_LOGIN='viewer'
export RD_CORE_VIEWER_PASSWORD='redrive-viewer-password'
export RD_CORE_TOKEN='rd-test-operator-token-alice'
export RD_CORE_VIEWER_TOKEN='rd-test-viewer-token'
export RD_CORE_API_KEY='rd-test-api-key-tasker-bot'
export RD_CORE_JWT_SECRET='rd-test-jwt-secret-not-for-production'
export RD_CORE_DEV_USER='alice'
