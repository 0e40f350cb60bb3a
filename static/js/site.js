// Every page: the header's menu on narrow screens, and dismissible notices (toasts).

const toggle = document.querySelector(".menu-toggle");
const header = document.querySelector(".site-header");

function setMenu(open) {
  header.classList.toggle("menu-open", open);
  toggle.setAttribute("aria-expanded", String(open));
}

if (toggle) {
  toggle.addEventListener("click", () => setMenu(toggle.getAttribute("aria-expanded") !== "true"));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && header.classList.contains("menu-open")) {
      setMenu(false);
      toggle.focus();
    }
  });
  document.addEventListener("click", (event) => {
    if (header.classList.contains("menu-open") && !header.contains(event.target)) setMenu(false);
  });
}

document.addEventListener("click", (event) => {
  const close = event.target.closest?.(".toast-close");
  if (!close) return;
  const toast = close.closest("li, .toast");
  const list = toast.parentElement;
  toast.hidden = true;
  if (list.matches(".toasts") && ![...list.children].some((item) => !item.hidden)) list.hidden = true;
});
