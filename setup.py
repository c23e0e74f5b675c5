"""Maps the repository's folders onto the `tritonlens.*` import names (see pyproject.toml)."""

from setuptools import find_packages, setup

FOLDERS = {"server": "tritonlens.server", "analysis": "tritonlens.analysis", "ascend_runner": "tritonlens.ascend_runner"}

packages: list[str] = []
package_dir: dict[str, str] = {}
for folder, name in FOLDERS.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(where=folder):
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(
    packages=packages,
    package_dir=package_dir,
    package_data={"tritonlens.ascend_runner": ["worker/*.py"], "tritonlens.analysis": ["data/*"]},
)
