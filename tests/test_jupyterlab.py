"""Notebook 03 in a real JupyterLab (headless Chromium): Run All, live plot and progress widget; and without ipywidgets.

The browser test starts the kit's JupyterLab on 127.0.0.1, opens a parameterised copy of notebook 03 in Debian's
Chromium through Playwright (never Playwright's own browser download: `make browser-deps` installs Chromium with
apt-get), runs every cell from the Run menu and checks what a person would see: no error, the live loss plot as an
image in section 5's output, the tqdm chunk bar as an ipywidgets progress widget. A screenshot is kept in
runs/ui/. The second test runs the same notebook in a kernel where `import ipywidgets` fails (plain Jupyter
without widgets) and checks it still completes and leaves training.png.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

from helpers import config, io
from _tiny import cpu_recommendation, write_curriculum

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "03_train_model1_lora.ipynb"
VENV_BIN = Path(sys.executable).parent
KERNEL = "qa-agent-kit"  # registered into the venv by `make setup` (ipykernel install --sys-prefix)
CHROMIUM = "/usr/bin/chromium"  # Debian's package; the path `make browser-deps` checks
RUN = "ui"
# 2 chunks x 16 questions at batch 8, one epoch: 2 + 3 optimizer steps (chunk 1 adds replayed questions), each
# logged, so the live plot redraws and the chunk bar moves twice. Run All took ~10 s here on two busy cores and
# each test ~15-25 s in all; the timeout leaves room for a first kernel start on a cold, loaded CI box.
OVERRIDES = {"train.epochs_per_chunk": 1, "train.logging_steps": 1}
RUN_ALL_TIMEOUT_S = 300
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _missing(reason: str) -> None:
    """Fail under CI (a missing browser is a broken set-up there), skip with the reason elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def _require_browser() -> None:
    """Chromium at CHROMIUM and Playwright importable, else _missing() with why and how to fix it."""
    if not os.access(CHROMIUM, os.X_OK):
        if shutil.which("apt-get") is None:
            why = "no apt-get on this machine: install Chromium yourself"
        elif os.geteuid() != 0:
            why = "not root, so `make browser-deps` could not apt-get it: run `sudo apt-get install -y chromium`"
        else:
            why = "run `make browser-deps` (apt-get install chromium)"
        _missing(f"{CHROMIUM} not found: {why}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("playwright is not installed: `make setup` installs the dev extra")


def _prepare(nb_dir: Path) -> tuple[Path, Path]:
    """A tiny curriculum + env.json under runs/ui/, and notebook 03 parameterised for it; (notebook, run dir)."""
    import papermill as pm
    from helpers.models.tiny import ensure_tiny_model

    assert NOTEBOOK.exists(), f"{NOTEBOOK} is missing"
    ensure_tiny_model(progress=False)  # shared cache (KIT_CACHE_DIR): built once (~2 min), outside the UI timeout
    run_dir = config.runs_root() / RUN
    write_curriculum(run_dir / "curriculum" / "train.jsonl", n_chunks=2, per_chunk=16)
    io.write_json(run_dir / "env.json", {"recommendation": cpu_recommendation()})
    nb_dir.mkdir(parents=True, exist_ok=True)
    out = nb_dir / NOTEBOOK.name
    pm.execute_notebook(str(NOTEBOOK), str(out), prepare_only=True, progress_bar=False,
                        parameters={"PROFILE": "smoke", "RUN": RUN, "OVERRIDES": OVERRIDES})
    # prepare_only leaves the kernelspec as committed (python3); JupyterLab starts the one named here.
    nb = nbformat.read(str(out), as_version=4)
    nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python (qa-agent-kit)", "language": "python"}
    nbformat.write(nb, str(out))
    return out, run_dir


def _train_cell_index(nb: nbformat.NotebookNode) -> int:
    """Index (among all cells) of section 5's training cell."""
    hits = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "train.train_adapter(" in c.source]
    assert len(hits) == 1, f"expected one cell calling train.train_adapter( in {NOTEBOOK.name}, found {len(hits)}"
    return hits[0]


def _problems(nb: nbformat.NotebookNode) -> list[str]:
    """Error outputs and tracebacks on stderr, one line each with the cell index."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.output_type == "error":
                found.append(f"cell {i}: {out.ename}: {out.evalue}")
            elif out.output_type == "stream" and out.name == "stderr" and "Traceback" in out.text:
                found.append(f"cell {i}: traceback on stderr: {out.text[-300:]}")
    return found


# --- JupyterLab on localhost -------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(base: str, token: str, path: str, method: str = "GET") -> object:
    req = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=5) as resp:
        body = resp.read()
    return json.loads(body) if body else None


def _user_settings(root: Path) -> Path:
    """A fresh JupyterLab settings dir: no news/update fetches (offline), every cell attached to the DOM."""
    settings = {
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        # The default (contentVisibility) may leave cells out of view unrendered; 'none' renders all of them,
        # so the checks below see section 5's outputs wherever the notebook is scrolled.
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    }
    for plugin, values in settings.items():
        path = root / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return root


class Lab:
    """`jupyter lab` from the venv on a free 127.0.0.1 port, with its own config/runtime/settings dirs."""

    def __init__(self, root_dir: Path, work: Path):
        self.port, self.token = _free_port(), secrets.token_hex(24)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = work / "jupyterlab.log"
        env = {k: v for k, v in os.environ.items() if k != "KIT_HEADLESS"}  # interactive: bars and live plots
        # The kernelspec and the widgets' lab extension live in the venv (sys-prefix), found without these.
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")):
            env[var] = str(work / sub)
        env["JUPYTERLAB_SETTINGS_DIR"] = str(_user_settings(work / "settings"))
        cmd = [str(VENV_BIN / "jupyter"), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={root_dir}", f"--MappingKernelManager.default_kernel_name={KERNEL}",
               # No outbound requests from the server either: no news feed, no PyPI extension listing.
               "--LabApp.news_url=None", "--LabApp.extension_manager=readonly"]
        if os.geteuid() == 0:  # CI containers run as root; the server refuses root without this
            cmd.append("--ServerApp.allow_root=True")
        self._log = open(self.log_path, "wb")
        # Own session: the server and the kernels it starts form one process group, ended together in stop().
        self.proc = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def log_tail(self, n: int = 40) -> str:
        """The last n lines of the server log (for failure messages)."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])

    def wait_ready(self, timeout_s: float = 90) -> None:
        """Poll /api/status until the server answers (start-up is ~5-15 s on two busy cores)."""
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"jupyter lab exited with {self.proc.returncode}")
            try:
                _api(self.base, self.token, "/api/status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        raise AssertionError(f"jupyter lab not up after {timeout_s:.0f} s")

    def kernel_states(self) -> list[str]:
        """execution_state of every running kernel."""
        return [k["execution_state"] for k in _api(self.base, self.token, "/api/kernels")]

    def session_kernels(self) -> list[str]:
        """Kernel names of the open notebook sessions."""
        return [s["kernel"]["name"] for s in _api(self.base, self.token, "/api/sessions") if s.get("kernel")]

    def stop(self) -> None:
        """Ask the server to shut down (it ends its kernels), then end the process group if anything is left."""
        try:
            if self.proc.poll() is None:
                _api(self.base, self.token, "/api/shutdown", method="POST")
                self.proc.wait(timeout=20)
        except Exception:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the group is ours alone (start_new_session)
            time.sleep(1)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)
        self._log.close()


# --- the browser side --------------------------------------------------------------------------------------

def _menu(page, menu: str, command: str) -> None:
    """Click a main-menu entry as a person would: the menu bar title, then the item bound to `command`."""
    page.locator(f'.lm-MenuBar-item:has(.lm-MenuBar-itemLabel:text-is("{menu}"))').click()
    item = page.locator(f'.lm-Menu-item[data-command="{command}"]')
    item.wait_for(state="visible", timeout=10_000)
    item.click()


def _wait_kernel_ready(page, lab: Lab, timeout_s: float = 90) -> None:
    """Until the notebook's kernel is the kit's and the toolbar shows it idle twice in a row (it flips
    idle -> connecting -> idle while the page connects; cells run before that are dropped silently)."""
    deadline, ok = time.time() + timeout_s, 0
    indicator = page.locator(".jp-Notebook-ExecutionIndicator").first
    while time.time() < deadline:
        page.wait_for_timeout(1000)
        status = indicator.get_attribute("data-status") if indicator.count() else None
        ok = ok + 1 if status == "idle" and lab.session_kernels() == [KERNEL] else 0
        if ok >= 2:
            return
    raise AssertionError(f"kernel not ready after {timeout_s:.0f} s (status {status}, kernels {lab.session_kernels()})")


def _run_all_and_wait(page, lab: Lab, n_code: int) -> list[str]:
    """Run > Run All Cells, then wait until no cell is queued and the kernel is idle; the input prompts at the end."""
    _menu(page, "Run", "runmenu:run-all")
    prompts_js = "els => els.map(e => e.textContent.trim())"
    t0, retried = time.time(), False
    deadline, settled = t0 + RUN_ALL_TIMEOUT_S, 0
    prompts: list[str] = []
    started = False
    while time.time() < deadline:
        page.wait_for_timeout(1000)
        prompts = page.eval_on_selector_all(".jp-Notebook .jp-CodeCell .jp-InputPrompt", prompts_js)
        busy = any("*" in p for p in prompts)
        started = started or busy or any(any(ch.isdigit() for ch in p) for p in prompts)
        if not started and not retried and time.time() - t0 > 20:  # the click landed on a busy page: once more
            _menu(page, "Run", "runmenu:run-all")
            retried = True
        idle = lab.kernel_states() == ["idle"]
        done = len(prompts) == n_code and any(ch.isdigit() for ch in prompts[-1])
        # Stop when the last cell has its number, or (an error halts Run All) nothing is queued for 3 polls.
        settled = settled + 1 if started and not busy and idle else 0
        if (done and settled) or settled >= 3:
            return prompts
    raise AssertionError(f"Run All not finished after {RUN_ALL_TIMEOUT_S} s; prompts: {prompts}")


def _save_and_read(page, path: Path, n_code: int, timeout_s: float = 30) -> nbformat.NotebookNode:
    """File > Save, then the notebook as JupyterLab wrote it (every code cell numbered, or the last save)."""
    _menu(page, "File", "docmanager:save")
    deadline = time.time() + timeout_s
    while True:
        try:
            nb = nbformat.read(str(path), as_version=4)
        except nbformat.reader.NotJSONError:  # read while the server was writing it (seen once in CI): read again
            if time.time() > deadline:
                raise
            time.sleep(0.5)
            continue
        counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
        if (len(counts) == n_code and all(counts)) or time.time() > deadline:
            return nb
        time.sleep(0.5)


def _keep_screenshot(page, name: str) -> Path:
    """Full-page PNG under the run's runs/ui/, copied to the project's runs/ui/ for a person to look at."""
    shot = config.runs_root() / "ui" / name
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    keep = ROOT / "runs" / "ui" / name
    keep.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, keep)
    return shot


@pytest.mark.browser
@pytest.mark.integration
@pytest.mark.pipeline
def test_notebook_03_runs_in_jupyterlab_with_live_plot_and_progress_widget(tmp_path):
    _require_browser()
    from playwright.sync_api import sync_playwright

    nb_path, run_dir = _prepare(tmp_path / "nb")
    prepared = nbformat.read(str(nb_path), as_version=4)
    n_code = sum(c.cell_type == "code" for c in prepared.cells)
    train_idx = _train_cell_index(prepared)
    lab = Lab(nb_path.parent, tmp_path)
    try:
        lab.wait_ready()
        with sync_playwright() as pw:
            # Playwright adds --no-sandbox (needed as root in CI containers). The resolver rule keeps the
            # browser off the network: only the local server resolves.
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
                "--disable-dev-shm-usage", "--disable-gpu",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"{lab.base}/lab/tree/{nb_path.name}?token={lab.token}", timeout=60_000)
                page.locator(".jp-Notebook .jp-CodeCell").first.wait_for(timeout=60_000)
                _wait_kernel_ready(page, lab)
                cell = page.locator(".jp-Notebook .jp-Cell").nth(train_idx)
                try:
                    prompts = _run_all_and_wait(page, lab, n_code)
                finally:  # the screenshot also shows what went wrong when Run All did not finish
                    cell.scroll_into_view_if_needed()
                    page.wait_for_timeout(500)  # let the widget and image paint
                    shot = _keep_screenshot(page, "03_train_model1_lora.png")
                saved = _save_and_read(page, nb_path, n_code)

                # What JupyterLab itself holds: every code cell ran, no error anywhere.
                problems = _problems(saved)
                assert not problems, "\n".join(problems)
                assert all(any(ch.isdigit() for ch in p) for p in prompts), f"cells not run: {prompts}"
                assert [c.execution_count for c in saved.cells if c.cell_type == "code"] == list(range(1, n_code + 1))
                assert "train_adapter(" in cell.locator(".jp-InputArea").inner_text()
                assert page.locator(".jp-Notebook .jp-OutputArea-output[data-mime-type="
                                    "'application/vnd.jupyter.stderr'] >> text=Traceback").count() == 0

                # The live plot: a decoded <img> (the display handle's PNG) in section 5's output.
                images = cell.locator(".jp-OutputArea-output img")
                assert images.count() >= 1, "no live plot image in section 5's output"
                width = images.first.evaluate("img => img.complete ? img.naturalWidth : 0")
                assert width >= 600, f"live plot image not decoded (naturalWidth {width})"
                # The chunk bar: tqdm.auto's ipywidgets HBox (label, progress, counts) drawn by the widget
                # manager, finished (2/2, green). tqdm pads its text with figure spaces (U+2007).
                boxes = cell.locator(".jp-OutputArea-output .jupyter-widgets.widget-hbox")
                texts = [t.replace("\u2007", " ") for t in boxes.all_inner_texts()]
                chunk_bars = [i for i, t in enumerate(texts) if "model1_lora chunks" in t]
                assert chunk_bars, f"no chunk progress widget in section 5's output (widgets: {texts})"
                bar = boxes.nth(chunk_bars[0])
                assert "100%" in texts[chunk_bars[0]] and "2/2" in texts[chunk_bars[0]], texts[chunk_bars[0]]
                assert bar.locator(".widget-hprogress .progress-bar-success").count() == 1, "bar not finished"
                assert cell.get_by_text("Error displaying widget").count() == 0
                train_out = saved.cells[train_idx].outputs
                assert any(WIDGET_MIME in o.get("data", {}) for o in train_out), "no widget output saved"
                assert any("image/png" in o.get("data", {}) for o in train_out), "no plot output saved"
            finally:
                browser.close()
    except Exception as exc:
        raise AssertionError(f"{exc}\n--- jupyter lab log (tail) ---\n{lab.log_tail()}") from exc
    finally:
        lab.stop()
    assert lab.proc.poll() is not None
    assert (run_dir / "models" / "model1_lora" / "training.png").stat().st_size > 10_000
    assert shot.stat().st_size > 20_000 and (ROOT / "runs" / "ui" / shot.name).exists()


# --- plain Jupyter, no widgets ---------------------------------------------------------------------------

BLOCK_IPYWIDGETS = '''\
"""Test support: make `import ipywidgets` fail in this interpreter (plain Jupyter without widgets)."""
import os
import sys


class _NoWidgets:
    def find_spec(self, name, path=None, target=None):
        if name == "ipywidgets" or name.startswith("ipywidgets."):
            with open(os.environ["KIT_TEST_BLOCKED_LOG"], "a") as fh:
                fh.write(name + "\\n")
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoWidgets())
'''


@pytest.mark.pipeline
def test_notebook_03_runs_in_plain_jupyter_without_ipywidgets(tmp_path, monkeypatch):
    import papermill as pm

    nb_path, run_dir = _prepare(tmp_path / "nb")
    block = tmp_path / "no-widgets"
    block.mkdir()
    (block / "sitecustomize.py").write_text(BLOCK_IPYWIDGETS, encoding="utf-8")
    blocked_log = tmp_path / "blocked.txt"
    # The kernel inherits this environment: sitecustomize runs at its start-up and refuses ipywidgets.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(block), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("KIT_TEST_BLOCKED_LOG", str(blocked_log))
    monkeypatch.delenv("KIT_HEADLESS", raising=False)  # interactive path: tqdm.auto and the live plot
    out = tmp_path / "executed.ipynb"
    pm.execute_notebook(str(nb_path), str(out), kernel_name=KERNEL, cwd=str(nb_path.parent), progress_bar=False,
                        log_output=False, execution_timeout=RUN_ALL_TIMEOUT_S)

    nb = nbformat.read(str(out), as_version=4)
    problems = _problems(nb)
    assert not problems, "\n".join(problems)
    assert "ipywidgets" in blocked_log.read_text().split(), "nothing tried ipywidgets: the block was not exercised"
    train_out = nb.cells[_train_cell_index(nb)].outputs
    assert not any(WIDGET_MIME in o.get("data", {}) for o in train_out), "a widget was displayed without ipywidgets"
    assert any("image/png" in o.get("data", {}) for o in train_out), "no live plot image without ipywidgets"
    stderr = "".join(o.text for o in train_out if o.output_type == "stream" and o.name == "stderr")
    assert "model1_lora chunks" in stderr and "2/2" in stderr, "tqdm's text bar (the fallback) is missing"
    assert (run_dir / "models" / "model1_lora" / "training.png").stat().st_size > 10_000
    assert io.read_json(run_dir / "models" / "model1_lora" / "summary.json")["complete"] is True
