// Every page: the header's menu on narrow screens, and dismissible notices (toasts). A
// success notice also goes by itself after a while, unless the pointer or focus is on it.

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

const SUCCESS_TOAST_MS = 8000;

function dismiss(toast) {
  const list = toast.parentElement;
  toast.hidden = true;
  const region = list.closest(".toasts");
  if (region && ![...list.children].some((item) => !item.hidden)) region.hidden = true;
}

document.addEventListener("click", (event) => {
  const close = event.target.closest?.(".toast-close");
  if (close) dismiss(close.closest("li, .toast"));
});

for (const toast of document.querySelectorAll(".toasts .message.success")) {
  const later = () => setTimeout(() => toast.matches(":hover, :focus-within") || dismiss(toast), SUCCESS_TOAST_MS);
  let timer = later();
  toast.addEventListener("mouseleave", () => {
    clearTimeout(timer);
    timer = later();
  });
  toast.addEventListener("focusout", () => {
    clearTimeout(timer);
    timer = later();
  });
}
