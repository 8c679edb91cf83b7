// Copy buttons and confirmations; no inline scripts, so the Content-Security-Policy can forbid them.
document.addEventListener('click', (event) => {
  const copy = event.target.closest('[data-copy]');
  if (!copy) return;
  const text = document.getElementById(copy.dataset.copy).textContent.trim();
  navigator.clipboard.writeText(text).then(
    () => {
      copy.textContent = 'Copied';
    },
    () => {
      copy.textContent = 'Select and copy the key by hand';
    },
  );
});
document.addEventListener('submit', (event) => {
  const message = event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
// A section that has just appeared (the new key) takes the focus, so keyboard and screen-reader
// users are taken to it instead of staying at the top of the page.
document.querySelector('[data-focus]')?.focus();
