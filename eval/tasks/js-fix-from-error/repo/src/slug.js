function slugify(title) {
  return title.trim().toLowerCase().replace(/[^a-z0-9]/g, "-");
}

module.exports = { slugify };
