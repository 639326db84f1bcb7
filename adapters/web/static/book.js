/* The booking page's progressive enhancement: the page books without it.
   - Step 1: the price follows the choices live (POST /api/public/{slug}/quote, the
     same answer the "Update price" button gets); picking another service shows its
     options at once. A coupon or referral code the API refuses is shown beside its
     field, with the price without it (and with the other code, when that one is
     taken), as the server answers without the script.
   - Step 1: an extra ticked and then left on a frequency that does not offer it stays
     in sight with a sentence beside it, as the server answers without the script.
   - Framed (?embed=1): tells the embedding page its height (the body's, so it shrinks
     as well as grows), for embed.js. */
(function () {
  "use strict";

  function money(cents) {
    var sign = cents < 0 ? "-" : "";
    var abs = Math.abs(cents);
    var whole = Math.floor(abs / 100).toLocaleString("en-US");
    return sign + "$" + whole + "." + String(abs % 100).padStart(2, "0");
  }

  function duration(minutes) {
    var hours = Math.floor(minutes / 60);
    var rest = minutes % 60;
    if (!hours) {
      return rest + " min";
    }
    return rest ? hours + " h " + rest + " min" : hours + " h";
  }

  function lineLabel(line) {
    if (line.kind === "parameter") {
      return line.name + ": " + line.quantity;
    }
    return line.quantity !== 1 ? line.name + " \u00d7 " + line.quantity : line.name;
  }

  function rows(price) {
    var out = price.lines.map(function (line) {
      return [lineLabel(line), money(line.amountCents), line.kind];
    });
    price.discounts.forEach(function (d) {
      out.push([d.name, money(-d.amountCents), "discount"]);
    });
    price.fees.forEach(function (f) {
      out.push([f.name, money(f.amountCents), "fee"]);
    });
    if (price.taxCents) {
      out.push(["Tax (" + price.taxRateBps / 100 + "%)", money(price.taxCents), "tax"]);
    }
    return out;
  }

  function livePrice(form) {
    var url = form.getAttribute("data-quote-url");
    var total = form.querySelector("[data-price-total]");
    var body = form.querySelector("[data-price-lines]");
    var later = form.querySelector("[data-price-later]");
    var length = form.querySelector("[data-price-duration]");
    var problem = form.querySelector("[data-price-problem]");
    /* The codes of the page: its field's name and the API's (the referral field is
       there only while the company's programme is on). */
    var codes = [
      { name: "coupon", wire: "couponCode" },
      { name: "referral", wire: "referralCode" }
    ].filter(function (code) {
      return form.querySelector('[data-code="' + code.name + '"]');
    });
    var asked = 0;
    var timer = null;

    function selection() {
      var data = new FormData(form);
      var request = {
        serviceId: data.get("service"),
        frequencySlug: data.get("frequency") || "one_time",
        parameters: [],
        extras: []
      };
      data.forEach(function (value, name) {
        var quantity = parseInt(value, 10);
        if (name.indexOf("param.") === 0) {
          request.parameters.push({ id: name.slice(6), quantity: isNaN(quantity) ? 0 : quantity });
        } else if (name.indexOf("extra.") === 0 && quantity > 0) {
          request.extras.push({ id: name.slice(6), quantity: quantity });
        }
      });
      var zip = String(data.get("zip") || "").trim();
      if (/^[0-9]{5}$/.test(zip)) {
        request.zip = zip;
      }
      codes.forEach(function (code) {
        var typed = String(data.get(code.name) || "").trim();
        if (typed) {
          request[code.wire] = typed;
        }
      });
      return request;
    }

    function show(answer) {
      var price = answer.firstVisit;
      total.textContent = money(price.totalCents);
      body.replaceChildren();
      rows(price).forEach(function (row) {
        var tr = document.createElement("tr");
        tr.className = "bkp-line-" + row[2];
        var th = document.createElement("th");
        th.scope = "row";
        th.textContent = row[0];
        var td = document.createElement("td");
        td.className = "num";
        td.textContent = row[1];
        tr.append(th, td);
        body.append(tr);
      });
      if (answer.laterVisits) {
        later.textContent = "Later visits: " + money(answer.laterVisits.totalCents) + " each.";
        later.hidden = false;
      } else {
        later.hidden = true;
      }
      if (length) {
        length.textContent = duration(price.durationMinutes);
      }
      problem.hidden = true;
    }

    function quote(request) {
      return fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(request)
      }).then(function (response) {
        return response.json().then(function (answer) {
          return { ok: response.ok, answer: answer };
        });
      });
    }

    function codeProblem(code, text) {
      var box = form.querySelector('[data-code="' + code.name + '"]');
      var error = box.querySelector("[data-code-error]");
      var input = box.querySelector("input");
      box.classList.toggle("has-error", Boolean(text));
      error.textContent = text;
      error.hidden = !text;
      if (text) {
        input.setAttribute("aria-invalid", "true");
      } else {
        input.removeAttribute("aria-invalid");
      }
    }

    function keeping(request, kept) {
      var out = Object.assign({}, request);
      codes.forEach(function (code) {
        if (kept.indexOf(code) < 0) {
          delete out[code.wire];
        }
      });
      return out;
    }

    /* The price of the request, as the server's code_check finds it: when it is
       refused but prices without its codes, each code is tried alone; those refused
       are said beside their fields and the price is the one with the others. */
    function checked(request) {
      var sent = codes.filter(function (code) {
        return request[code.wire];
      });
      var asIs = { refused: {} };
      return quote(request).then(function (result) {
        asIs.result = result;
        if (result.ok || !sent.length) {
          return asIs;
        }
        return quote(keeping(request, [])).then(function (without) {
          if (!without.ok) {
            return asIs;
          }
          if (sent.length === 1) {
            var one = { result: without, refused: {} };
            one.refused[sent[0].name] = result.answer.error || "";
            return one;
          }
          return Promise.all(
            sent.map(function (code) {
              return quote(keeping(request, [code]));
            })
          ).then(function (alone) {
            var refused = {};
            var kept = sent.filter(function (code, index) {
              if (!alone[index].ok) {
                refused[code.name] = alone[index].answer.error || "";
              }
              return alone[index].ok;
            });
            if (kept.length === sent.length) {
              return asIs; /* each alone is taken: the two together are refused */
            }
            if (!kept.length) {
              return { result: without, refused: refused };
            }
            return quote(keeping(request, kept)).then(function (some) {
              return { result: some.ok ? some : without, refused: refused };
            });
          });
        });
      });
    }

    /* A quantity outside its field's range is said beside the field in the words the
       page gives without the script ("Choose 1 to 8."), and nothing is priced until it
       is mended: the API's own sentence names ids a customer never sees. */
    function outOfRange() {
      var wrong = 0;
      form.querySelectorAll("fieldset[data-service]:not([disabled]) input[type=number]").forEach(
        function (input) {
          var low = Number(input.min);
          var high = Number(input.max);
          var text = input.value.trim();
          var bad =
            !input.disabled &&
            text !== "" &&
            (!/^[0-9]{1,9}$/.test(text) || Number(text) < low || Number(text) > high);
          rangeProblem(input, bad ? "Choose " + low + " to " + high + "." : "");
          wrong += bad ? 1 : 0;
        }
      );
      return wrong;
    }

    function rangeProblem(input, text) {
      var field = input.closest(".field");
      var id = input.id + "-error";
      var note = document.getElementById(id);
      var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (one) {
        return one && one !== id;
      });
      if (!text) {
        if (note && note.hasAttribute("data-range")) {
          note.remove();
          field.classList.remove("has-error");
          input.removeAttribute("aria-invalid");
          input.setAttribute("aria-describedby", described.join(" "));
        }
        return;
      }
      if (!note) {
        note = document.createElement("p");
        note.className = "field-error";
        note.id = id;
        note.setAttribute("data-range", "");
        field.appendChild(note);
      }
      note.textContent = text;
      field.classList.add("has-error");
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", described.concat([id]).join(" "));
    }

    function ask() {
      asked += 1;
      var mine = asked;
      if (outOfRange()) {
        problem.textContent = "Some quantities are out of range: see the fields marked.";
        problem.hidden = false;
        return;
      }
      checked(selection())
        .then(function (outcome) {
          if (mine !== asked) {
            return;
          }
          var result = outcome.result;
          codes.forEach(function (code) {
            codeProblem(code, outcome.refused[code.name] || "");
          });
          if (result.ok) {
            show(result.answer);
          } else {
            problem.textContent = result.answer.error || "This choice cannot be priced.";
            problem.hidden = false;
          }
        })
        .catch(function () {
          /* offline: the Update price button still works */
        });
    }

    function showOptions() {
      var service = form.querySelector("input[name=service]:checked");
      var frequency = form.querySelector("input[name=frequency]:checked");
      form.querySelectorAll("fieldset[data-service]").forEach(function (set) {
        var on = service && set.getAttribute("data-service") === service.value;
        set.hidden = !on;
        set.disabled = !on;
      });
      form.querySelectorAll("[data-frequencies]").forEach(function (extra) {
        var slugs = extra.getAttribute("data-frequencies").split(" ").filter(Boolean);
        var on = !slugs.length || (frequency && slugs.indexOf(frequency.value) >= 0);
        var input = extra.querySelector("input");
        /* An extra chosen and then left on a frequency that does not offer it stays in
           sight with the server's sentence beside it (priced and sent without it), as
           the page answers without the script: an extra is never dropped unsaid. */
        var chosen = input && (input.type === "checkbox" ? input.checked : Number(input.value) > 0);
        extra.hidden = !on && !chosen;
        extra.querySelectorAll("input").forEach(function (each) {
          each.disabled = !on;
        });
        notOffered(extra, input, !on && chosen);
      });
    }

    function notOffered(extra, input, show) {
      var note = extra.querySelector("[data-not-offered]");
      var box = extra.querySelector(".bkp-check, .bkp-extra-count");
      if (!show) {
        if (note) {
          note.remove();
          if (box) {
            box.classList.remove("has-error");
          }
          input.removeAttribute("aria-invalid");
          var rest = (input.getAttribute("aria-describedby") || "").split(" ").filter(function (id) {
            return id && id !== note.id;
          });
          if (rest.length) {
            input.setAttribute("aria-describedby", rest.join(" "));
          } else {
            input.removeAttribute("aria-describedby");
          }
        }
        return;
      }
      if (note || extra.querySelector(".field-error")) {
        return; /* said already, by this script or by the server */
      }
      var label = extra.querySelector("label").cloneNode(true);
      label.querySelectorAll("input, .muted").forEach(function (part) {
        part.remove();
      });
      note = document.createElement("p");
      note.className = "field-error";
      note.id = input.id + "-not-offered";
      note.setAttribute("data-not-offered", "");
      note.setAttribute("role", "status");
      note.textContent =
        label.textContent.trim() +
        " is not offered on this frequency. Continue without it," +
        " or choose a frequency it is offered on.";
      (box && box.classList.contains("bkp-extra-count") ? box : extra).appendChild(note);
      if (box) {
        box.classList.add("has-error");
      }
      input.setAttribute("aria-invalid", "true");
      var described = input.getAttribute("aria-describedby");
      input.setAttribute("aria-describedby", (described ? described + " " : "") + note.id);
    }

    function changed(event) {
      if (event.target.name === "service" || event.target.name === "frequency") {
        showOptions();
      }
      clearTimeout(timer);
      timer = setTimeout(ask, 200);
    }

    form.addEventListener("change", changed);
    form.addEventListener("input", changed);
    var update = form.querySelector("[data-update-price]");
    if (update) {
      update.hidden = true;
    }
  }

  function reportHeight() {
    if (window.parent === window) {
      return;
    }
    function send() {
      /* The body's own height, not the document's scrollHeight: that one never falls
         below the iframe's height, so the frame would grow and never shrink. */
      var body = document.body;
      var style = window.getComputedStyle(body);
      var height =
        body.getBoundingClientRect().height +
        parseFloat(style.marginTop) +
        parseFloat(style.marginBottom);
      window.parent.postMessage({ bookingHeight: Math.ceil(height) }, "*");
    }
    send();
    if (window.ResizeObserver) {
      new ResizeObserver(send).observe(document.body);
    }
  }

  var form = document.querySelector("form[data-quote-url]");
  if (form) {
    livePrice(form);
  }
  reportHeight();
})();
