"""Triton's own client against `octet serve`: tritonclient.http.InferenceServerClient, binary
tensors (its default) and JSON ones, for every case tests/serve/test_serve_kserve.cc lists in
CASES (a JSON file): each output must equal, bit for bit, the .npy file octet's Session wrote.
Usage: kserve_client.py HOST:PORT CASES. Prints one line per check; exits 1 on any mismatch."""
import json
import sys

import numpy as np
import tritonclient.http as httpclient


def main():
    url, cases_path = sys.argv[1], sys.argv[2]
    with open(cases_path) as f:
        cases = json.load(f)
    client = httpclient.InferenceServerClient(url=url)
    failures = 0

    def check(what, ok):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        failures += 0 if ok else 1

    check("is_server_live", client.is_server_live())
    check("is_server_ready", client.is_server_ready())
    meta = client.get_server_metadata()
    check("server metadata lists binary_tensor_data", "binary_tensor_data" in meta["extensions"])
    for case in cases:
        model, version = case["model"], case["version"]
        check(f"{model}/{version} is_model_ready", client.is_model_ready(model, version))
        m = client.get_model_metadata(model, version)
        check(f"{model}/{version} metadata", m["name"] == model and m["versions"] == [version])
        x = np.load(case["input"])
        for binary in (True, False):
            inp = httpclient.InferInput(case["input_name"], list(x.shape), "FP32")
            inp.set_data_from_numpy(x, binary_data=binary)
            # Binary: no outputs named, so the client asks for all of them in binary form
            # (binary_data_output). JSON: every output named, with binary_data false.
            outputs = None if binary else [httpclient.InferRequestedOutput(o["name"], binary_data=False)
                                           for o in case["outputs"]]
            r = client.infer(model, [inp], model_version=version, outputs=outputs, request_id="triton-1")
            response = r.get_response()
            form = "binary" if binary else "JSON"
            check(f"{model}/{version} {form} id and version",
                  response.get("id") == "triton-1" and response["model_version"] == version)
            for o in case["outputs"]:
                want = np.load(o["file"])
                got = r.as_numpy(o["name"])
                same = got is not None and got.dtype == want.dtype and got.shape == want.shape and \
                    got.tobytes() == want.tobytes()
                check(f"{model}/{version} {form} {o['name']} {list(want.shape)} bitwise", same)
    try:
        client.infer("no-such-model", [inp])
        check("unknown model refused", False)
    except httpclient.InferenceServerException as e:
        check("unknown model refused: " + str(e.status()), "no model" in e.message())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
