// The edge runtime hands the `api` function its requests under the function's
// name (/api/v1/…); the API's own paths, as api-v1.md writes them, start at /v1/.
export const FUNCTION_NAME = "api";
export const BASE_PATH = `/${FUNCTION_NAME}`;
